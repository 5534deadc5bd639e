import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE } from '../../../../core/index.ts';
import { collectionOf, forwarderGrants } from '../../../../core/security/forwarder-permissions.ts';
import { compareGrants, grantKey, grantsOf } from '../../../../core/security/rbac-rules.ts';
import { watchedResources } from '../../../../forwarder/watched-resources.ts';
import { find, kustomize } from '../../manifests.ts';

const SUBJECT = { kind: 'ServiceAccount' as const, name: 'pool-spirit-forwarder', namespace: DEFAULT_NAMESPACE };

describe('forwarder RBAC', () => {
  it('grants exactly list and watch of each collection forwarder/watched-resources.ts watches', async () => {
    const { objects } = await kustomize('infra/cluster');
    const { missing, extra } = compareGrants(
      grantsOf(objects, SUBJECT),
      forwarderGrants(watchedResources(DEFAULT_NAMESPACE)),
    );
    expect({ missing: missing.map(grantKey), extra: extra.map(grantKey) }).toEqual({ missing: [], extra: [] });
  });

  it('reaches Secrets and the other rendered kinds only by list and watch, only in the product namespace', async () => {
    const { objects } = await kustomize('infra/cluster');
    const grants = grantsOf(objects, SUBJECT);
    const owned = grants.filter(
      (g) => g.apiGroup === '' && ['secrets', 'configmaps', 'serviceaccounts', 'services'].includes(g.resource),
    );
    expect(owned.map((g) => `${g.verb} ${g.resource}`).sort()).toEqual(
      ['configmaps', 'secrets', 'serviceaccounts', 'services'].flatMap((r) => [`list ${r}`, `watch ${r}`]).sort(),
    );
    expect(owned.every((g) => g.namespace === DEFAULT_NAMESPACE)).toBe(true);
    // And it asks for metadata only: no Secret data is ever sent to it (test/forwarder/metadata-only.e2e.test.ts).
    expect(watchedResources(DEFAULT_NAMESPACE).find((r) => r.kind === 'Secret')?.metadataOnly).toBe(true);
  });

  it('the Deployment runs as that ServiceAccount, in the namespace the watches are scoped to', async () => {
    const { objects } = await kustomize('infra/cluster');
    const deployment = find(objects, 'Deployment', 'pool-spirit-forwarder', DEFAULT_NAMESPACE) as any;
    expect(deployment.spec.template.spec.serviceAccountName).toBe(SUBJECT.name);
    expect(deployment.spec.template.spec.containers[0].args).toContain('--namespace=$(POD_NAMESPACE)');
  });

  it('reads group, resource and namespace from collection paths, and names a bad one', () => {
    expect(collectionOf('/api/v1/nodes')).toEqual({ apiGroup: '', resource: 'nodes', namespace: '' });
    expect(collectionOf('/apis/apps/v1/namespaces/ns1/deployments')).toEqual({
      apiGroup: 'apps',
      resource: 'deployments',
      namespace: 'ns1',
    });
    expect(collectionOf('/apis/poolspirit.io/v1alpha1/poolspirits')).toEqual({
      apiGroup: 'poolspirit.io',
      resource: 'poolspirits',
      namespace: '',
    });
    expect(() => collectionOf('/apis/apps/v1/deployments/x/status')).toThrow(/path: expected a collection path/);
  });
});
