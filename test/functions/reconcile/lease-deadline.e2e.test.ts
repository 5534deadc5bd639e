/**
 * Found by the chaos soak: a reconcile that timed out under a slow apiserver stops its I/O at its deadline
 * (docs/decisions/0044), so it never records its outcome nor releases its lease. With the lease's full TTL
 * (90 s) the pool was then left to nobody for a minute and a half: a foreign sidecar added meanwhile stayed
 * 48 s, past the soak's 30 s bound. A lease now ends a few seconds after its invocation's deadline
 * (docs/decisions/0047).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { getItem, keys, LEASE_OWNER, LEASE_UNTIL } from '../../../adapters/state-table/index.ts';
import type { KubeObject } from '../../../core/index.ts';
import { DEFAULT_NAMESPACE } from '../../../core/index.ts';
import { DEADLINE_MARGIN_MS } from '../../../functions/common/observed-handler.ts';
import { LEASE_PAST_DEADLINE_MS } from '../../../functions/reconcile/run.ts';
import { CLUSTER_ID, type ReconcileWorld, startReconcileWorld } from './harness.ts';

const POOL = 'edge-timed-out';
const REMAINING_MS = 3_000;

describe('the lease of a reconcile that timed out', () => {
  let world: ReconcileWorld;
  let release!: (err: Error) => void;
  let timedOut: unknown;
  let invokedAt = 0;
  let endedAt = 0;
  beforeAll(async () => {
    world = await startReconcileWorld({ lockedWaitMs: 300, controllers: false });
    await world.createNodePool(POOL, { type: 'Edge' });
    // An apply the apiserver never answers, and that ignores the abort: the worst a hung call can do.
    const never = new Promise<never>((_, reject) => (release = reject));
    never.catch(() => undefined);
    world.wrapClient = (client: ClusterClient) => ({
      ...client,
      async apply(obj: KubeObject) {
        if (obj.kind === 'Secret') return never;
        return client.apply(obj);
      },
    });
    invokedAt = Date.now();
    timedOut = await world.invoke(POOL, { remainingMs: REMAINING_MS }).then(
      () => undefined,
      (err: unknown) => err,
    );
    endedAt = Date.now();
    world.wrapClient = undefined;
  });
  afterAll(async () => {
    release?.(new Error('test over'));
    await world?.stop();
  });

  it('ends the invocation at its deadline, still holding the lease', async () => {
    expect((timedOut as Error | undefined)?.name).toBe('TimeoutError');
    expect(endedAt - invokedAt).toBeLessThan(REMAINING_MS);
    expect(endedAt - invokedAt).toBeGreaterThanOrEqual(REMAINING_MS - DEADLINE_MARGIN_MS - 50);
    const item = await getItem(world.table, keys.pool(CLUSTER_ID, POOL));
    expect(item?.[LEASE_OWNER]).toBeDefined();
  });

  it('lapses a few seconds after the deadline, not after the configured TTL, and the next notice repairs the pool', async () => {
    const item = await getItem(world.table, keys.pool(CLUSTER_ID, POOL));
    const lapsesAt = Number(item?.[LEASE_UNTIL]);
    const deadline = invokedAt + REMAINING_MS;
    expect(lapsesAt).toBeLessThanOrEqual(deadline + LEASE_PAST_DEADLINE_MS + 100);
    expect(lapsesAt).toBeGreaterThanOrEqual(deadline + LEASE_PAST_DEADLINE_MS - 1_000);
    expect(lapsesAt - invokedAt).toBeLessThan(world.deps.leaseTtlMs / 4);

    // Before it lapses a notice is requeued; once it has, the same notice takes the pool over.
    await expect(world.invoke(POOL, { via: 'notice', eventId: 'after-timeout' })).rejects.toThrow(/being reconciled/);
    world.clockOffsetMs = lapsesAt - Date.now() + 1;
    try {
      expect((await world.invoke(POOL, { via: 'notice', eventId: 'after-timeout' })).result).toBe('applied');
    } finally {
      world.clockOffsetMs = 0;
    }
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `ps-${POOL}`, namespace: DEFAULT_NAMESPACE },
    };
    expect(await world.admin.read(deployment)).toBeDefined();
  });
});
