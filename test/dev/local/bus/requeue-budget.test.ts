/**
 * Does the local bus's retry budget reach past a held lease? A reconcile notice that finds its pool's lease
 * held ends as a RequeueError asking to look again when the lease lapses or in 10 s, whichever is sooner
 * (functions/reconcile/run.ts). With
 * the rule of serverless.yml and the local fleet's backoff, measured on a fake clock: the figures are
 * printed as one JSON line (docs/decisions/0011-held-lease-notice-requeued.md quotes them).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StateTable } from '../../../../adapters/state-table/index.ts';
import { RequeueError } from '../../../../core/outcome.ts';
import { FakeClock } from '../../../../dev/local/bus/clock.ts';
import { loadRules } from '../../../../dev/local/bus/rules-from-serverless.ts';
import { type LocalBus, startLocalBus } from '../../../../dev/local/bus/server.ts';
import type { BusActivity, Rule } from '../../../../dev/local/bus/types.ts';
import { reconcileDeps } from '../../../../functions/reconcile/deps.ts';
import { LEASE_LAPSE_MARGIN_MS, LOCKED_RECHECK_MS } from '../../../../functions/reconcile/run.ts';

/** The local fleet's bus backoff (dev/local/fleet/fleet.ts). */
const FLEET_RETRY = { baseDelayMs: 200, maxDelayMs: 5_000 };
const LEASE_TTL_MS = reconcileDeps({ table: {} as StateTable }).leaseTtlMs;
const noticeRule = (): Rule => {
  const rule = loadRules(join(import.meta.dirname, '..', '..', '..', '..', 'serverless.yml')).find(
    (r) => r.target === 'reconcile' && JSON.stringify(r.pattern).includes('Cluster Change Notice'),
  );
  if (!rule) throw new Error('serverless.yml has no reconcile rule for change notices');
  return { ...rule, eventBus: undefined };
};

let bus: LocalBus | undefined;
afterEach(async () => {
  await bus?.stop();
  bus = undefined;
});

interface Run {
  deliveredAtMs?: number;
  deadLetteredAtMs?: number;
  attempts: number;
}

/** One notice against a pool whose lease is held for `heldForMs`; the target requeues (or just fails) until then. */
async function notice(heldForMs: number, jitter: 0 | 1, honour: 'requeue' | 'plain-error'): Promise<Run> {
  const clock = new FakeClock();
  const t0 = clock.now();
  const run: Run = { attempts: 0 };
  const onActivity = (a: BusActivity) => {
    if (a.type === 'delivered') run.deliveredAtMs = clock.now() - t0;
    if (a.type === 'dead-letter') run.deadLetteredAtMs = clock.now() - t0;
  };
  bus = await startLocalBus({
    clock,
    random: () => jitter,
    rules: [noticeRule()],
    retry: FLEET_RETRY,
    onActivity,
    targets: {
      reconcile: async () => {
        run.attempts++;
        const heldFor = t0 + heldForMs - clock.now();
        if (heldFor <= 0) return;
        if (honour === 'plain-error') throw new Error('pool is being reconciled by another invocation');
        // As functions/reconcile/run.ts asks: to look again when the lease lapses, or sooner.
        throw new RequeueError(
          'pool is being reconciled by another invocation',
          Math.min(heldFor + LEASE_LAPSE_MARGIN_MS, LOCKED_RECHECK_MS),
        );
      },
    },
  });
  bus.putEvents([
    {
      Source: 'pool-spirit.forwarder',
      DetailType: 'Cluster Change Notice',
      Detail: JSON.stringify({ poolName: 'p1' }),
    },
  ]);
  await clock.advance(2 * 3600_000);
  await bus.stop();
  bus = undefined;
  return run;
}

describe('a notice that finds the lease held, on the local bus with the fleet settings', () => {
  it('is delivered once the lease of a dead holder lapses, never dead-lettered; a live holder costs one retry', async () => {
    const rule = noticeRule();
    const dead = {
      shortestWaits: await notice(LEASE_TTL_MS, 0, 'requeue'),
      longestWaits: await notice(LEASE_TTL_MS, 1, 'requeue'),
    };
    const live = await notice(2_000, 0, 'requeue');
    // Without honouring afterMs (a plain error), the whole budget of retries is spent inside the lease.
    const unhonoured = {
      shortestWaits: await notice(LEASE_TTL_MS, 0, 'plain-error'),
      longestWaits: await notice(LEASE_TTL_MS, 1, 'plain-error'),
    };
    console.log(
      JSON.stringify({
        measure: 'requeue-budget',
        rule: {
          maximumRetryAttempts: rule.retryPolicy?.maximumRetryAttempts,
          maximumEventAgeInSeconds: rule.retryPolicy?.maximumEventAgeInSeconds,
        },
        backoff: FLEET_RETRY,
        leaseTtlMs: LEASE_TTL_MS,
        deadHolder: dead,
        liveHolder2s: live,
        withoutAfterMs: unhonoured,
      }),
    );
    for (const run of [dead.shortestWaits, dead.longestWaits]) {
      // One look every LOCKED_RECHECK_MS until the lapse: about half the rule's retries.
      expect(run.attempts).toBe(Math.ceil(LEASE_TTL_MS / LOCKED_RECHECK_MS) + 1);
      expect(run.deadLetteredAtMs).toBeUndefined();
      expect(run.deliveredAtMs).toBeGreaterThanOrEqual(LEASE_TTL_MS);
      expect(run.deliveredAtMs).toBeLessThanOrEqual(LEASE_TTL_MS + 2 * LEASE_LAPSE_MARGIN_MS);
    }
    expect(live.attempts).toBe(2);
    expect(live.deadLetteredAtMs).toBeUndefined();
    expect(live.deliveredAtMs).toBeLessThanOrEqual(2_000 + 2 * LEASE_LAPSE_MARGIN_MS);
    // The budget this replaces did not reach past the lease, whatever the jitter: the notice was lost.
    for (const run of [unhonoured.shortestWaits, unhonoured.longestWaits]) {
      expect(run.deliveredAtMs).toBeUndefined();
      expect(run.deadLetteredAtMs).toBeLessThan(LEASE_TTL_MS);
    }
  });
});
