/**
 * Stopping the local fleet is prompt: a delivery waiting for its retry is dropped, not waited for. It used
 * to drain the bus first, so a stop waited out every pending backoff (up to a minute) — and, with a notice
 * requeued behind a held lease, until that lease lapsed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { beginReconcile } from '../../../../adapters/state-table/index.ts';
import type { BusActivity } from '../../../../dev/local/bus/index.ts';
import { type LocalFleet, startLocalFleet } from '../../../../dev/local/fleet/fleet.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../../../events/index.ts';
import { waitFor } from '../../../support/wait.ts';

describe('fleet.stop()', () => {
  let fleet: LocalFleet | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('drops a delivery waiting for its retry instead of waiting for it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-fleet-stop-'));
    const activity: BusActivity[] = [];
    const lines: string[] = [];
    fleet = await startLocalFleet({
      clusters: 1,
      pools: 1,
      nodesPerPool: 1,
      cloudPools: 0,
      stateDir: dir,
      readyDelayMs: 20,
      onBusActivity: (a) => activity.push(a),
      log: (line) => lines.push(line),
    });
    await fleet.waitConverged(60_000);
    // A pool whose lease a dead invocation holds for 90 s: a request for it is requeued, its retry ~10 s away.
    const held = await beginReconcile(
      fleet.table,
      { clusterId: 'cluster-01', nodePool: 'held-pool' },
      'dead-invocation',
      90_000,
      new Date(),
    );
    expect(held.status).toBe('acquired');
    fleet.bus.putEvents([
      {
        Source: RECONCILER_SOURCE,
        DetailType: RECONCILE_REQUEST_DETAIL_TYPE,
        EventBusName: fleet.eventBusName,
        Detail: JSON.stringify({ clusterId: 'cluster-01', nodePool: 'held-pool', reason: 'test', requestedBy: 'test' }),
      },
    ]);
    const failed = await waitFor(
      () => activity.find((a) => a.type === 'attempt-failed' && a.retryInMs !== null),
      20_000,
      'the requeued attempt',
    );
    expect(failed.type === 'attempt-failed' && failed.retryInMs).toBeGreaterThanOrEqual(5_000);
    expect(fleet.bus.stats().waitingRetry).toBeGreaterThanOrEqual(1);

    const started = performance.now();
    await fleet.stop();
    const stopMs = performance.now() - started;
    console.log(
      JSON.stringify({
        measure: 'fleet-stop',
        stopMs: Math.round(stopMs),
        retryWasDueInMs: failed.type === 'attempt-failed' ? failed.retryInMs : null,
      }),
    );
    // Well before the retry was due, let alone the lease's lapse.
    expect(stopMs).toBeLessThan(5_000);
    expect(lines.some((l) => /bus deliver(y|ies) not yet due dropped/.test(l))).toBe(true);
    fleet = undefined;
  }, 90_000);
});
