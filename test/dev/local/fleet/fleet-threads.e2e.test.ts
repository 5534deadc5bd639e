import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { type LocalFleet, localApiOf, startLocalFleet } from '../../../../dev/local/fleet/fleet.ts';
import { listPrefix, objectKey } from '../../../../dev/local/kube-api/storage/keys.ts';
import { waitFor } from '../../../support/wait.ts';

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

/**
 * A fleet whose clusters run in worker threads: the same system as on the main thread, and what tests,
 * benchmarks and the soak read of a cluster besides HTTP (request log, faults, storage, forwarder) reaches
 * it in its thread.
 */
describe('local fleet with its clusters in worker threads', () => {
  let fleet: LocalFleet;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-fleet-threads-'));
    fleet = await startLocalFleet({
      clusters: 3,
      pools: 2,
      nodesPerPool: 1,
      cloudPools: 1,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      functionThreads: 1,
      clusterThreads: 2,
    });
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs every cluster in a thread and converges every edge pool, the Cloud pool getting nothing', async () => {
    expect(fleet.clusterThreads).toBe(2);
    for (const c of fleet.clusters) {
      expect(c.thread).toBe('worker');
      // Nothing of the cluster lives on this thread: only its URL, kubeconfig and the messages to it.
      expect(c.cluster).toBeUndefined();
      expect(c.kubelet).toBeUndefined();
    }
    const p = await fleet.waitConverged(90_000);
    expect(p.clusters.map((c) => [c.id, c.wanted, c.available, c.failing])).toEqual([
      ['cluster-01', 2, 2, 0],
      ['cluster-02', 2, 2, 0],
      ['cluster-03', 2, 2, 0],
    ]);
    expect(fleet.bus.deadLetters()).toEqual([]);
    expect(fleet.reconcile.stats.errors).toBe(0);
  }, 120_000);

  it("reads each cluster's request log and storage in its thread", async () => {
    for (const c of fleet.clusters) {
      const log = localApiOf(c).requestLog;
      const reconcilerWrites = await log.writesSince(0, {
        fieldManager: 'pool-spirit-reconciler',
        resource: 'poolspirits',
      });
      expect(new Set(reconcilerWrites.map((w) => w.name))).toEqual(new Set(['pool-00', 'pool-01']));
      const mark = await log.mark();
      await RawObjectApi.fromKubeConfig(c.kubeConfig).requestJson(HttpMethod.GET, '/api/v1/namespaces/default');
      const since = await log.since(mark);
      expect(since.some((r) => r.verb === 'get' && r.resource === 'namespaces' && r.name === 'default')).toBe(true);
      expect(await log.countWritesSince(0)).toBeGreaterThan(reconcilerWrites.length);

      const storage = localApiOf(c).storage;
      const pools = await storage.list(listPrefix({ group: 'apps.openyurt.io', resource: 'nodepools' }));
      expect(pools.items.map((i) => i.key).sort()).toEqual([
        '/registry/apps.openyurt.io/nodepools/cloud-0',
        '/registry/apps.openyurt.io/nodepools/pool-00',
        '/registry/apps.openyurt.io/nodepools/pool-01',
      ]);
      const spirit = await storage.get(
        objectKey({ group: 'poolspirit.io', resource: 'poolspirits' }, undefined, 'pool-00'),
      );
      expect(spirit?.value).toMatchObject({ kind: 'PoolSpirit', metadata: { name: 'pool-00' } });
    }
  });

  it('injects API faults in the thread of the one cluster asked, and turns them off again', async () => {
    const [first, second] = fleet.clusters;
    const create = (c: (typeof fleet.clusters)[number], name: string) =>
      RawObjectApi.fromKubeConfig(c!.kubeConfig).requestJson(HttpMethod.POST, '/api/v1/namespaces/default/configmaps', {
        body: configMap(name),
      });
    await localApiOf(first!).setFaults({
      seed: 1,
      rules: [{ verbs: ['create'], resources: ['configmaps'], errorRate: 1, errorStatus: 500 }],
    });
    await expect(create(first, 'refused')).rejects.toMatchObject({ code: 500 });
    await expect(create(second, 'accepted')).resolves.toMatchObject({ metadata: { name: 'accepted' } });
    await localApiOf(first!).setFaults({ rules: [] });
    await expect(create(first, 'accepted-now')).resolves.toMatchObject({ metadata: { name: 'accepted-now' } });
    // A bad rule is refused in the thread, and the error comes back with its words.
    await expect(localApiOf(first!).setFaults({ rules: [{ errorRate: 2 }] })).rejects.toThrow(/errorRate must be/);
  });

  it("reports each forwarder's notices, and stopping one ends that cluster's events only", async () => {
    for (const c of fleet.clusters) expect((await c.forwarder.stats()).sender.sent).toBeGreaterThan(0);
    const [first, second] = fleet.clusters;
    await first!.forwarder.stop(2_000);
    const sentBefore = await Promise.all([first!, second!].map(async (c) => (await c.forwarder.stats()).sender.sent));
    for (const c of [first!, second!])
      await RawObjectApi.fromKubeConfig(c.kubeConfig).requestJson(
        HttpMethod.PATCH,
        '/apis/apps.openyurt.io/v1beta1/nodepools/pool-00',
        { body: { metadata: { labels: { touched: 'yes' } } }, contentType: 'application/merge-patch+json' },
      );
    // The running forwarder tells the bus about its cluster's change; by then the stopped one would have too.
    await waitFor(
      async () => (await second!.forwarder.stats()).sender.sent > sentBefore[1]!,
      30_000,
      'the running forwarder to send the change',
    );
    expect((await first!.forwarder.stats()).sender.sent).toBe(sentBefore[0]);
  });

  it('refuses cluster threads for process-mode pods and a real control plane, before starting anything', async () => {
    await expect(
      startLocalFleet({ clusters: 1, pools: 0, nodesPerPool: 0, kubelet: 'process', clusterThreads: 1, stateDir: dir }),
    ).rejects.toThrow(/only the local control plane with the sim kubelet runs in cluster threads/);
  });
});
