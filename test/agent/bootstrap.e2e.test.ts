import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { stableHash } from '../../core/hash.ts';
import {
  BOOTSTRAP_HASH_ANNOTATION,
  BOOTSTRAP_HASH_KEY,
  BOOTSTRAP_MANIFESTS_KEY,
  bootstrapManifests,
} from '../../core/render/bootstrap.ts';
import type { RunningEtcd } from '../../dev/local/etcd/launch.ts';
import { waitFor } from '../support/wait.ts';
import {
  agentOptions,
  freePort,
  type Host,
  type Own,
  patchConfigMap,
  startEtcd,
  startHost,
  startOwn,
  tempDir,
  withAgent,
} from './world.ts';

function ownApi(own: Own): RawObjectApi {
  const kc = new KubeConfig();
  kc.loadFromFile(own.kubeconfigPath);
  return RawObjectApi.fromKubeConfig(kc);
}

describe('agent bootstrap', () => {
  let host: Host;
  let etcd: RunningEtcd;
  let own: Own;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    tmp = await tempDir();
    [host, etcd] = await Promise.all([startHost(), startEtcd()]);
    own = await startOwn({ etcd, dir: tmp.dir });
  });
  afterAll(async () => {
    await own?.stop();
    await etcd?.stop();
    await host?.stop();
    await tmp?.remove();
  });

  it('applies the manifests once, reports the rendered hash, and writes nothing more while nothing changes', async () => {
    const mark = own.cluster.requestLog.mark();
    await withAgent(agentOptions(host, own.kubeconfigPath, { reportIntervalMs: 60_000 }), async (agent) => {
      const status = await waitFor(
        async () => {
          const s = await host.status();
          return s.bootstrap?.appliedHash ? s : undefined;
        },
        15_000,
        'bootstrap reported',
      );
      // The hash the agent computes from the parsed YAML is the one the reconciler rendered.
      expect(status.bootstrap?.appliedHash).toBe(host.bootstrapHash);
      expect(Date.parse(status.bootstrap!.appliedTime!)).toBeGreaterThan(Date.now() - 60_000);

      const api = ownApi(own);
      const crb = await api.requestJson<{ subjects: Array<{ name: string }> }>(
        HttpMethod.GET,
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/poolspirit:yurthub',
      );
      expect(crb.subjects[0].name).toBe('system:nodes');
      const crd = await api.requestJson<{ status: { conditions: Array<{ type: string; status: string }> } }>(
        HttpMethod.GET,
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.apps.openyurt.io',
      );
      expect(crd.status.conditions).toContainEqual(expect.objectContaining({ type: 'Established', status: 'True' }));

      // One server-side apply per manifest, Namespaces and CRDs first.
      const manifests = bootstrapManifests();
      const writes = own.cluster.requestLog.writesSince(mark, { fieldManager: 'pool-spirit-agent' });
      expect(writes.map((w) => w.name).sort()).toEqual(manifests.map((m) => m.metadata.name).sort());
      expect(writes.every((w) => w.verb === 'patch' && w.status < 300)).toBe(true);
      const foundation = manifests.filter(
        (m) => m.kind === 'Namespace' || m.kind === 'CustomResourceDefinition',
      ).length;
      expect(
        writes
          .slice(0, foundation)
          .every((w) => w.resource === 'namespaces' || w.resource === 'customresourcedefinitions'),
      ).toBe(true);

      // Several more passes (each reads the ConfigMap and checks the objects) write nothing, neither to the
      // own apiserver nor, with nothing new to say before the periodic refresh, to the host.
      await waitFor(async () => (await host.status()).leader?.observedTime, 10_000, 'first leader report');
      const after = own.cluster.requestLog.mark();
      const hostAfter = host.cluster.requestLog.mark();
      const ticks = agent.stats.ticks;
      await waitFor(() => agent.stats.ticks >= ticks + 5, 10_000, 'five more passes');
      expect(own.cluster.requestLog.countWritesSince(after)).toBe(0);
      expect(host.cluster.requestLog.countWritesSince(hostAfter)).toBe(0);
      expect(own.cluster.requestLog.since(after).filter((r) => r.resource === 'leases').length).toBeGreaterThanOrEqual(
        4,
      );
      expect(agent.stats.bootstrap.applies).toBe(1);
    });
  });

  it('re-applies when the content and hash change, and when an applied object goes missing', async () => {
    await withAgent(agentOptions(host, own.kubeconfigPath), async (agent) => {
      await waitFor(() => agent.stats.bootstrap.applies === 1, 15_000, 'first apply');
      const manifests = [
        ...bootstrapManifests(),
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-extra' } },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'pool-info', namespace: 'kube-extra' },
          data: { pool: 'hangzhou' },
        },
      ];
      const hash = stableHash(manifests);
      const mark = own.cluster.requestLog.mark();
      await patchConfigMap(host, {
        metadata: { annotations: { [BOOTSTRAP_HASH_ANNOTATION]: hash } },
        data: {
          [BOOTSTRAP_MANIFESTS_KEY]: manifests.map((m) => stringify(m)).join('---\n'),
          [BOOTSTRAP_HASH_KEY]: hash,
        },
      });
      await waitFor(async () => (await host.status()).bootstrap?.appliedHash === hash, 15_000, 'new hash reported');
      expect(agent.stats.bootstrap.applies).toBe(2);
      const writes = own.cluster.requestLog.writesSince(mark, { fieldManager: 'pool-spirit-agent' });
      // Namespaces, then CRDs, go first, even though the ConfigMap lists the new Namespace near the end.
      const order = writes.map((w) => w.resource);
      const lastNamespace = order.lastIndexOf('namespaces');
      expect(writes[lastNamespace].name).toBe('kube-extra');
      expect(order.slice(0, lastNamespace).every((r) => r === 'namespaces')).toBe(true);
      expect(order[lastNamespace + 1]).toBe('customresourcedefinitions');
      expect(writes.at(-1)).toMatchObject({ resource: 'configmaps', namespace: 'kube-extra', name: 'pool-info' });

      await ownApi(own).requestJson(
        HttpMethod.DELETE,
        '/apis/rbac.authorization.k8s.io/v1/clusterroles/poolspirit:yurthub',
      );
      await waitFor(() => agent.stats.bootstrap.applies === 3, 15_000, 'apply after an object went missing');
      await ownApi(own).requestJson(
        HttpMethod.GET,
        '/apis/rbac.authorization.k8s.io/v1/clusterroles/poolspirit:yurthub',
      );
    });
  });

  it('waits for an own apiserver that is not up yet, then bootstraps', async () => {
    const port = await freePort();
    const late = await tempDir();
    // The kubeconfig points at a port nothing listens on yet.
    const { writeFile } = await import('node:fs/promises');
    const { kubeconfigYaml } = await import('../../dev/local/kube-api/index.ts');
    const path = `${late.dir}/late.kubeconfig`;
    await writeFile(path, kubeconfigYaml('late', `http://127.0.0.1:${port}`));
    let lateOwn: Own | undefined;
    try {
      await withAgent(agentOptions(host, path), async (agent) => {
        await waitFor(() => agent.stats.errors.bootstrap >= 3, 10_000, 'failed attempts while the apiserver is down');
        expect(agent.stats.bootstrap.applies).toBe(0);
        lateOwn = await startOwn({ port, dir: late.dir });
        await waitFor(() => agent.stats.bootstrap.applies === 1, 15_000, 'bootstrap once the apiserver is up');
        // One successful apply per manifest, nothing half-done before the apiserver was up.
        const writes = lateOwn.cluster.requestLog.writesSince(0, { fieldManager: 'pool-spirit-agent' });
        expect(writes.length).toBe(agent.stats.bootstrap.objectsApplied);
        expect(writes.every((w) => w.status < 300)).toBe(true);
        expect(writes.map((w) => w.name)).toContain('poolspirit:yurthub');
      });
    } finally {
      await lateOwn?.stop();
      await late.remove();
    }
  });
});
