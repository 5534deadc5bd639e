/**
 * A stack restart (a kill: running invocations and pending bus retries are lost) that leaves a dead lease on
 * a pool deleted meanwhile: the resumed fleet releases the lease and requests a reconcile, which finds the
 * pool gone, within seconds rather than after the lease's 90 s. Found by the 30-minute soak (seed 4242): without the request nothing ever named the
 * deleted pool again, and its item kept the dead lease (and no TTL) for good.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  beginReconcile,
  getItem,
  keys,
  LEASE_OWNER,
  readPoolState,
  TTL_ATTRIBUTE,
} from '../../../../adapters/state-table/index.ts';
import { type LocalFleet, type LocalFleetOptions, startLocalFleet } from '../../../../dev/local/fleet/fleet.ts';
import { heldLeases } from '../../../../dev/local/fleet/held-leases.ts';
import { waitFor } from '../../../support/wait.ts';

describe('a resumed fleet and the leases of invocations killed with the stack', () => {
  let fleet: LocalFleet | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('requests a reconcile of a pool kept with a dead lease, which then finds the pool gone and lets the item expire', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-held-lease-'));
    const lines: string[] = [];
    const options: LocalFleetOptions = {
      clusters: 1,
      pools: 1,
      nodesPerPool: 1,
      cloudPools: 0,
      store: 'etcd',
      persist: true,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      log: (line) => lines.push(line),
    };
    fleet = await startLocalFleet(options);
    await fleet.waitConverged(90_000);
    // The killed invocation: it took the lease of a pool (deleted since, so no resync will name it) and died.
    const key = { clusterId: 'cluster-01', nodePool: 'deleted-pool' };
    // Its lease would block the pool for 90 s: the restart releases it at once.
    expect((await beginReconcile(fleet.table, key, 'killed-invocation', 90_000, new Date())).status).toBe('acquired');
    await fleet.bus.stop(); // the kill: nothing pending survives
    await fleet.stop();

    fleet = await startLocalFleet(options);
    expect(fleet.clusters[0].resumed).toBe(true);
    expect(lines.some((l) => /1 pool\(s\) kept with the lease of an invocation killed with the stack/.test(l))).toBe(
      true,
    );
    const table = fleet.table;
    await waitFor(
      async () => (await readPoolState(table, key.clusterId, key.nodePool))?.outcome === 'gone',
      20_000,
      'the pool reconciled (found gone) well before the 90 s lease would lapse',
    );
    expect((await getItem(table, keys.pool(key.clusterId, key.nodePool)))?.[LEASE_OWNER]).toBeUndefined();
    expect((await getItem(table, keys.pool(key.clusterId, key.nodePool)))?.[TTL_ATTRIBUTE]).toEqual(expect.any(Number));
    expect((await heldLeases(table, ['cluster-01'])).map((h) => h.nodePool)).not.toContain('deleted-pool');
  }, 180_000);
});
