/**
 * The pool agents' static RBAC (infra/cluster/agent/rbac.yaml) against its one source of truth,
 * core/security/agent-permissions.ts, and the opt-in admission component against core/render/names.ts.
 * The live checks (the agent can, others cannot) are in test/infra/cluster/reconciler/reconciler-bounded.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE } from '../../../../core/index.ts';
import type { KubeObject } from '../../../../core/kube.ts';
import { objectNames } from '../../../../core/render/names.ts';
import {
  agentGroup,
  agentRbac,
  compareGrants,
  grantKey,
  grantsOf,
  RECONCILER_GROUP,
} from '../../../../core/security/index.ts';
import { kustomize, kustomizeOverlay, renderPool } from '../../manifests.ts';

const AGENTS = { kind: 'Group' as const, name: agentGroup(DEFAULT_NAMESPACE) };
const strip = (o: KubeObject) => {
  const { labels: _labels, ...metadata } = o.metadata as KubeObject['metadata'] & { labels?: unknown };
  return { ...o, metadata };
};

describe("the agents' static RBAC", () => {
  it('infra/cluster ships exactly the objects of core/security/agent-permissions.ts', async () => {
    const { objects } = await kustomize('infra/cluster');
    const shipped = objects.filter(
      (o) => o.metadata.name === 'pool-spirit-agent' && o.apiVersion.startsWith('rbac.authorization.k8s.io/'),
    );
    const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    expect(shipped.map(strip).sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      agentRbac(DEFAULT_NAMESPACE).sort((a, b) => key(a).localeCompare(key(b))),
    );
  });

  it("grants the namespace's ServiceAccounts exactly get ConfigMaps there and patch PoolSpirit status", async () => {
    const grants = grantsOf((await kustomize('infra/cluster')).objects, AGENTS);
    const { missing, extra } = compareGrants(grants, grantsOf(agentRbac(DEFAULT_NAMESPACE), AGENTS));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    expect(grants.map(grantKey).sort()).toEqual([
      '*cluster* poolspirit.io poolspirits/status patch *',
      `${DEFAULT_NAMESPACE} core configmaps get *`,
    ]);
  });

  it('the pod runs as the per-pool ServiceAccount in that namespace, the only RBAC-related object rendered', async () => {
    const rendered = await renderPool('edge-a');
    const deployment = rendered.objects.find((o) => o.kind === 'Deployment')!;
    const sa = (deployment.spec as { template: { spec: { serviceAccountName: string } } }).template.spec
      .serviceAccountName;
    expect(sa).toBe('ps-edge-a');
    expect(
      rendered.objects
        .filter((o) => o.kind === 'ServiceAccount')
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    ).toEqual([`${DEFAULT_NAMESPACE}/ps-edge-a`]);
    expect(rendered.objects.filter((o) => o.apiVersion.startsWith('rbac.authorization.k8s.io/'))).toEqual([]);
  });

  it('gives the reconciler group nothing', () => {
    expect(grantsOf(agentRbac(DEFAULT_NAMESPACE), { kind: 'Group', name: RECONCILER_GROUP })).toEqual([]);
  });
});

describe('components/agent-status-admission (opt-in; not run by the local API)', () => {
  it("builds a ValidatingAdmissionPolicy on poolspirits/status writes by the namespace's ServiceAccounts, and its binding denies", async () => {
    const objects = await kustomizeOverlay(['infra/cluster'], ['infra/cluster/components/agent-status-admission']);
    const policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as any;
    const binding = objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as any;
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: ['poolspirit.io'], apiVersions: ['*'], operations: ['UPDATE'], resources: ['poolspirits/status'] },
    ]);
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConditions[0].expression).toBe(
      `request.userInfo.username.startsWith('system:serviceaccount:${DEFAULT_NAMESPACE}:')`,
    );
    expect(binding.spec).toEqual({ policyName: policy.metadata.name, validationActions: ['Deny'] });
  });

  it('its CEL name rule is exactly when core/render/names.ts names the ServiceAccount ps-<pool>', async () => {
    const objects = await kustomizeOverlay(['infra/cluster'], ['infra/cluster/components/agent-status-admission']);
    const expression = (objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as any).spec.validations[0]
      .expression as string;
    const pattern = /matches\('([^']+)'\)/.exec(expression)![1];
    expect(expression).toContain(`'system:serviceaccount:${DEFAULT_NAMESPACE}:ps-' + object.metadata.name`);
    for (const pool of ['edge-a', 'a'.repeat(44), 'a'.repeat(45), 'shop.17', 'Shop-17', 'x-1-y']) {
      expect(new RegExp(pattern).test(pool), pool).toBe(objectNames(pool).base === `ps-${pool}`);
    }
  });
});
