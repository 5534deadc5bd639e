/**
 * Found by the chaos soak (docs/reliability.md, "What the soak found"): a reconcile that dies holding its
 * pool's lease (killed, or timed out and gone with its sandbox) never records its outcome. Every notice for
 * the pool while the lease is held (90 s) finds it held, asks the dead holder for one more pass, and returns
 * success, so the platform never retries it; when the lease lapses, no event is left to reconcile the pool.
 *
 * Marked `fails` while the bug is open: it asserts the behaviour the fix must give, and vitest reports it as
 * passing only as long as that behaviour is missing. When the reconcile is fixed, drop `.fails`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import type { KubeObject } from '../../core/index.ts';
import { DEFAULT_NAMESPACE } from '../../core/index.ts';
import { getItem, keys, LEASE_OWNER } from '../../adapters/state-table/index.ts';
import { CLUSTER_ID, startReconcileWorld, type ReconcileWorld } from './harness.ts';

describe('a lease left by a dead reconcile', () => {
  let world: ReconcileWorld;
  let release!: (err: Error) => void;
  let dead: Promise<unknown> | undefined;
  // Set up outside the test marked `fails`, so a broken setup fails the file instead of passing it.
  beforeAll(async () => {
    world = await startReconcileWorld();
    await world.createNodePool('edge-dead', { type: 'Edge' });
    // Frozen until the file ends: then it is let go, so it settles while the table is still there.
    const never = new Promise<never>((_, reject) => (release = reject));
    never.catch(() => undefined); // whoever still awaits it gets the rejection; nobody else must

    world.wrapClient = (client: ClusterClient) => ({
      ...client,
      async apply(obj: KubeObject) {
        // The holder dies mid-apply: it never returns, never records its outcome, never releases.
        if (obj.kind === 'Secret') return never;
        return client.apply(obj);
      },
    });
    dead = world.invoke('edge-dead').catch(() => undefined);
    await vi.waitFor(async () => {
      const item = await getItem(world.table, keys.pool(CLUSTER_ID, 'edge-dead'));
      expect(item?.[LEASE_OWNER]).toBeDefined();
      expect(await world.admin.read({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ps-edge-dead', namespace: DEFAULT_NAMESPACE } })).toBeDefined();
    }, { timeout: 10_000, interval: 20 });
    world.wrapClient = undefined;
  });
  afterAll(async () => {
    release?.(new Error('test over'));
    await dead;
    await world?.stop();
  });

  it.fails('does not acknowledge a notice it did not act on: the platform must deliver it again', async () => {
    // Today the notice returns `skipped-locked`, which the bus counts as delivered; the dead holder never
    // runs the pass it was asked for, and after the lease lapses nothing reconciles the pool.
    await expect(world.invoke('edge-dead', { via: 'notice' })).rejects.toThrow();
  });
});
