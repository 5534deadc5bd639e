/**
 * Found by the chaos soak (docs/reliability.md, "What the soak found"): a reconcile that dies holding its
 * pool's lease (killed, or timed out and gone with its sandbox) never records its outcome. A notice for the
 * pool while the lease was held used to ask the dead holder for one more pass and return success, so the
 * platform never retried it, and when the lease lapsed no event was left to reconcile the pool. Now such a
 * notice ends as a requeue (docs/reconcile.md, "Outcomes"): redelivered until the lease lapses, it then takes
 * over the pool.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { getItem, keys, LEASE_OWNER, LEASE_UNTIL } from '../../../adapters/state-table/index.ts';
import type { KubeObject } from '../../../core/index.ts';
import { DEFAULT_NAMESPACE } from '../../../core/index.ts';
import { RequeueError } from '../../../core/outcome.ts';
import { LOCKED_RECHECK_MS } from '../../../functions/reconcile/run.ts';
import { CLUSTER_ID, type ReconcileWorld, startReconcileWorld } from './harness.ts';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'ps-edge-dead', namespace: DEFAULT_NAMESPACE },
};

describe('a lease left by a dead reconcile', () => {
  let world: ReconcileWorld;
  let release!: (err: Error) => void;
  let dead: Promise<unknown> | undefined;
  beforeAll(async () => {
    // A short wait for the lease: each delivery below finds it held until it lapses.
    world = await startReconcileWorld({ lockedWaitMs: 300, controllers: false });
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
    await vi.waitFor(
      async () => {
        const item = await getItem(world.table, keys.pool(CLUSTER_ID, 'edge-dead'));
        expect(item?.[LEASE_OWNER]).toBeDefined();
        expect(
          await world.admin.read({
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'ps-edge-dead', namespace: DEFAULT_NAMESPACE },
          }),
        ).toBeDefined();
      },
      { timeout: 10_000, interval: 20 },
    );
    world.wrapClient = undefined;
  });
  afterAll(async () => {
    release?.(new Error('test over'));
    await dead;
    await world?.stop();
  });

  it('does not acknowledge a notice it did not act on: it is requeued until the lease lapses, and then repairs the pool', async () => {
    const item = await getItem(world.table, keys.pool(CLUSTER_ID, 'edge-dead'));
    const lapsesAt = Number(item?.[LEASE_UNTIL]);
    const eventId = 'notice-while-held';
    // Deliver the notice as the platform does: each requeue is redelivered after the afterMs it asked for.
    const requeues: number[] = [];
    let result: string | undefined;
    try {
      while (result === undefined && requeues.length <= 20) {
        try {
          result = (await world.invoke('edge-dead', { via: 'notice', eventId })).result;
        } catch (err) {
          expect(err).toBeInstanceOf(RequeueError);
          const { afterMs } = err as RequeueError;
          expect(afterMs).toBeGreaterThan(0);
          expect(afterMs).toBeLessThanOrEqual(LOCKED_RECHECK_MS);
          requeues.push(afterMs);
          // Nothing was written meanwhile: the dead holder left the set half-made.
          await expect(world.admin.read(deployment)).rejects.toThrow(/not found/);
          world.clockOffsetMs += afterMs;
        }
      }
      // Taken over once the lease lapsed, not before; within the notice rule's 20 retries (serverless.yml).
      expect(result).toBe('applied');
      expect(Date.now() + world.clockOffsetMs).toBeGreaterThanOrEqual(lapsesAt);
      expect(requeues.length).toBeLessThanOrEqual(Math.ceil(world.deps.leaseTtlMs / LOCKED_RECHECK_MS));
    } finally {
      world.clockOffsetMs = 0;
    }
    expect(await world.admin.read(deployment)).toBeDefined();
  });
});
