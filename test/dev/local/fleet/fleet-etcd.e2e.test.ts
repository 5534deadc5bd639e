import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEtcdClient } from '../../../../dev/local/etcd/client.ts';
import { type LocalFleet, startLocalFleet } from '../../../../dev/local/fleet/fleet.ts';

/** `local up --store etcd`: each cluster's objects are in a real etcd (the pinned build), not in memory. */
describe('local fleet on the etcd store', () => {
  let fleet: LocalFleet;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-fleet-etcd-'));
    fleet = await startLocalFleet({
      clusters: 2,
      pools: 2,
      nodesPerPool: 1,
      cloudPools: 0,
      store: 'etcd',
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
    });
    await fleet.waitConverged(90_000);
  }, 150_000);

  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps every cluster in its own etcd: the seeded pools and the reconciled pool-spirits are read back with an etcd client', async () => {
    const endpoints = fleet.clusters.map((c) => c.storage!.etcdEndpoint);
    expect(endpoints.every((e) => typeof e === 'string')).toBe(true);
    expect(new Set(endpoints).size).toBe(2);
    for (const endpoint of endpoints) {
      const etcd = createEtcdClient([endpoint!]);
      try {
        const pools = await etcd.getAll().prefix('/registry/apps.openyurt.io/nodepools/').keys();
        expect(pools.sort()).toEqual([
          '/registry/apps.openyurt.io/nodepools/pool-00',
          '/registry/apps.openyurt.io/nodepools/pool-01',
        ]);
        const spirits = await etcd.getAll().prefix('/registry/poolspirit.io/poolspirits/').json();
        expect(Object.keys(spirits).sort()).toEqual([
          '/registry/poolspirit.io/poolspirits/pool-00',
          '/registry/poolspirit.io/poolspirits/pool-01',
        ]);
        const deployments = await etcd.getAll().prefix('/registry/deployments/pool-spirit-system/').keys();
        expect(deployments).toHaveLength(2);
      } finally {
        etcd.close();
      }
    }
  });

  it('stops each etcd with the fleet', async () => {
    const endpoints = fleet.clusters.map((c) => c.storage!.etcdEndpoint!);
    await fleet.stop();
    for (const endpoint of endpoints) await expect(fetch(`${endpoint}/health`)).rejects.toThrow();
  }, 60_000);
});
