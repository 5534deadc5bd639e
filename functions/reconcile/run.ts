/**
 * One reconcile invocation for one (cluster, NodePool) key, in named steps: take the pool's lease
 * (`takeLease`, which also refuses an event id already handled), run the pass (`runPass`: converge), record
 * its outcome (`recordPass`, which releases the lease) — two table writes — and report it (`reportPass`). If
 * another invocation asked for another pass while we held the lease, run again (bounded).
 *
 * How it ends (core/outcome.ts, docs/reconcile.md "Outcomes"): a result is `done`; a RequeueError (the
 * pool still being deleted, or its lease held by another invocation) is `requeue`; a TerminalError (an
 * unregistered cluster, an access the policy refuses) is `terminal` and goes to the handler, which records
 * the dead letter; anything else is `retry` and is thrown for the platform to retry.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type {
  BeginResult,
  ClusterRegistration,
  PoolReconcileState,
  ReconcileOutcome,
  StateTable,
  TriggeringEvent,
} from '../../adapters/state-table/index.ts';
import {
  beginReconcile,
  getItem,
  keys,
  LEASE_OWNER,
  LEASE_UNTIL,
  LeaseLostError,
  meteredTable,
  readInvocationStart,
  recordOutcome,
  sanitizeErrorMessage,
} from '../../adapters/state-table/index.ts';
import { outcomeOf, RequeueError, TerminalError } from '../../core/outcome.ts';
import { terminalReasonOf, unknownCluster } from '../common/terminal.ts';
import type { ConvergeOutcome, ConvergeResult } from './converge.ts';
import { converge } from './converge.ts';
import type { ReconcileDeps } from './deps.ts';
import type { ReconcileTarget } from './trigger.ts';

/**
 * `duplicate`: this very event was reconciled already; `served`: a pass that took the lease after the bus
 * accepted the event read the cluster, so it saw the change (docs/decisions/0026).
 */
export type ReconcileResultKind = ReconcileOutcome | 'duplicate' | 'served' | 'superseded';

/** A requeued notice comes back this long after the holder's lease lapses, so it finds the lease free. */
export const LEASE_LAPSE_MARGIN_MS = 500;
/**
 * ...or sooner, to look again: a live holder is done within seconds, and a redelivery waiting for the whole
 * lease (90 s) would hold back the local bus's drain for nothing. Ten looks fit a 90 s lease within the
 * notice rule's 20 retries.
 */
export const LOCKED_RECHECK_MS = 10_000;
/** How often a held lease is looked at while waiting for it (one read each). */
const LOCKED_POLL_MS = 200;
/**
 * How long a lease outlives its invocation's deadline. Past the deadline the invocation starts no I/O and
 * what it had in flight was aborted a second before (adapters/invocation-signal.ts), but a write the
 * apiserver had already received may still commit; a few seconds cover that. A lease as long as the
 * configured TTL would keep a pool from every other invocation long after a holder that timed out or was
 * killed can no longer act (docs/decisions/0047).
 */
export const LEASE_PAST_DEADLINE_MS = 5_000;

/** The invocation a reconcile runs in: its lease owner id and, under Lambda, its deadline. */
export interface Invocation {
  id: string;
  /** When the platform ends the invocation, on deps.clock()'s time line; unknown to a direct caller. */
  deadline?: number;
}

/** The lease TTL a pass beginning at `now` takes: the configured one, cut at the invocation's deadline. */
export function leaseTtlAt(leaseTtlMs: number, invocation: Invocation, now: Date): number {
  if (invocation.deadline === undefined) return leaseTtlMs;
  return Math.max(1, Math.min(leaseTtlMs, invocation.deadline + LEASE_PAST_DEADLINE_MS - now.getTime()));
}

export interface ReconcileResult {
  result: ReconcileResultKind;
  clusterId: string;
  nodePool: string;
  passes: number;
  /** Writes this invocation made to the cluster's apiserver. */
  clusterWrites: number;
  /** Write units this invocation consumed in the state table. */
  tableWriteUnits: number;
  /** Objects applied (kind/namespace/name), in order. */
  applied: string[];
}

/** One invocation's reconcile as it runs: what it was asked, the metered table, and its running summary. */
interface Run {
  deps: ReconcileDeps;
  target: ReconcileTarget;
  invocation: Invocation;
  key: { clusterId: string; nodePool: string };
  table: StateTable;
  writeUnits: () => number;
  summary: ReconcileResult;
}

type Acquired = Extract<BeginResult, { status: 'acquired' }>;
/** What taking the lease for a pass came to, when it did not end in a requeue. */
type LeaseTaken = Acquired | { status: 'duplicate' | 'served' | 'yielded' };
/** A pass's converge, finished or failed, and how long it took. */
type PassRun = { durationMs: number } & (
  | { converged: ConvergeResult; failure?: undefined }
  | { converged?: undefined; failure: unknown }
);

export async function reconcile(
  deps: ReconcileDeps,
  target: ReconcileTarget,
  invocation: Invocation,
): Promise<ReconcileResult> {
  const run = startRun(deps, target, invocation);
  // One round trip before any write: a served event ends here, and a cluster nobody registered must not
  // leave a lease item behind (anyone who can put events could otherwise grow the table one item per
  // invented name).
  const { served, registration } = await readInvocationStart(run.table, run.key, target.acceptedAt, deps.clock());
  if (served) {
    noteServed(run, served);
    return finish(run, 'served');
  }
  if (!registration) throw unknownCluster(target.clusterId, 'detail.clusterId');

  for (let pass = 1; pass <= deps.maxPasses; pass++) {
    const lease = await takeLease(run, pass);
    if (lease.status === 'yielded') break;
    if (lease.status !== 'acquired') return finish(run, lease.status);
    run.summary.passes = pass;
    const ran = await runPass(run, registration, lease.previous);
    const recorded = await recordPass(run, lease, ran, pass);
    if (recorded === 'superseded') return finish(run, 'superseded');
    const outcome = reportPass(run, ran, pass);
    // Across passes, "applied" wins over a later pass that found nothing left to do.
    if (!(run.summary.result === 'applied' && outcome === 'unchanged')) run.summary.result = outcome;
    if (!recorded.requeue) break;
    deps.logger.info('another invocation asked for one more pass');
  }
  return finish(run, run.summary.result);
}

function startRun(deps: ReconcileDeps, target: ReconcileTarget, invocation: Invocation): Run {
  const metered = meteredTable(deps.table);
  const key = { clusterId: target.clusterId, nodePool: target.nodePool };
  const summary: ReconcileResult = {
    result: 'unchanged',
    ...key,
    passes: 0,
    clusterWrites: 0,
    tableWriteUnits: 0,
    applied: [],
  };
  return { deps, target, invocation, key, table: metered.table, writeUnits: metered.writeUnits, summary };
}

function finish(run: Run, result: ReconcileResultKind): ReconcileResult {
  const { summary, deps } = run;
  summary.result = result;
  summary.tableWriteUnits = run.writeUnits();
  deps.metrics.addMetric('TableWriteUnits', MetricUnit.Count, summary.tableWriteUnits);
  deps.metrics.addMetric('ClusterWrites', MetricUnit.Count, summary.clusterWrites);
  return summary;
}

function noteServed(run: Run, by: { by: string; passStartedAt: number }): void {
  run.deps.logger.info('a later pass already read the cluster after this event; nothing to do', {
    eventTime: new Date(run.target.acceptedAt).toISOString(),
    by: by.by,
    passStartedAt: new Date(by.passStartedAt).toISOString(),
  });
  run.deps.metrics.addMetric('ServedEvents', MetricUnit.Count, 1);
}

/**
 * Takes the pool's lease for pass `pass`. The first pass waits a little for a holder; a later one that finds
 * the pool taken yields it to that holder. A first pass that still finds it held ends the invocation as a
 * requeue (thrown).
 */
async function takeLease(run: Run, pass: number): Promise<LeaseTaken> {
  const { deps, target } = run;
  const event = pass === 1 ? { id: target.eventId, acceptedAt: target.acceptedAt } : undefined;
  let begun = await begin(run, event);
  if (begun.status === 'locked' && pass === 1) begun = await awaitLease(run, event);
  switch (begun.status) {
    case 'acquired':
      return begun;
    case 'duplicate':
      deps.logger.info('event already reconciled; nothing to do', { eventId: target.eventId });
      deps.metrics.addMetric('DuplicateEvents', MetricUnit.Count, 1);
      return begun;
    case 'served':
      noteServed(run, begun);
      return begun;
    case 'locked':
      if (pass > 1) {
        // Our own event was served by pass 1. The invocation that took the pool since reads the cluster after
        // every ask we were serving; if it dies, its own event is not acknowledged either.
        deps.logger.info('another invocation took the pool for the next pass', {
          heldUntil: new Date(begun.heldUntil).toISOString(),
        });
        return { status: 'yielded' };
      }
      throw heldLeaseRequeue(run, begun.heldUntil);
  }
}

/**
 * Still held after a short wait. The holder has been asked to run once more for our notice, but only a live
 * holder will: one that was killed or timed out holding the lease never records its outcome. So the notice
 * is not acknowledged: it is requeued, and a redelivery finds the pool converged (a cheap, read-only pass)
 * or, once the lease has lapsed, takes over a dead holder's pool (docs/reconcile.md, "Outcomes").
 */
function heldLeaseRequeue(run: Run, heldUntil: number): RequeueError {
  const { deps, target } = run;
  const afterMs = Math.min(Math.max(0, heldUntil - deps.clock().getTime()) + LEASE_LAPSE_MARGIN_MS, LOCKED_RECHECK_MS);
  deps.logger.info('pool is being reconciled by another invocation; requeued', {
    heldUntil: new Date(heldUntil).toISOString(),
    afterMs,
  });
  deps.metrics.addMetric('LeaseContention', MetricUnit.Count, 1);
  // Lambda counts the requeue among its Errors; the errors alarm subtracts this count (serverless.yml).
  deps.metrics.addMetric('ReconcileRequeues', MetricUnit.Count, 1);
  return new RequeueError(
    `pool ${target.nodePool} is being reconciled by another invocation until ${new Date(heldUntil).toISOString()}`,
    afterMs,
  );
}

/** Converges the pool once, catching what it throws: the outcome is recorded either way. */
async function runPass(run: Run, registration: ClusterRegistration, previous: PoolReconcileState): Promise<PassRun> {
  const { deps, target, summary } = run;
  const started = performance.now();
  let ran: PassRun;
  try {
    const converged = await converge(deps, target, registration, {
      readOwnedAtOnce: mayHaveObjects(previous),
      pkiProof: previous.pkiProof,
    });
    ran = { converged, durationMs: performance.now() - started };
    summary.clusterWrites += converged.clusterWrites;
    summary.applied.push(...converged.applied);
  } catch (failure) {
    ran = { failure, durationMs: performance.now() - started };
    summary.clusterWrites += (failure as { clusterWrites?: number } | undefined)?.clusterWrites ?? 0;
  }
  deps.metrics.addMetric('ReconcileDuration', MetricUnit.Milliseconds, ran.durationMs);
  return ran;
}

/**
 * Whether the pool's stored state leaves it possible that the pass reads its owned objects: not when its last
 * pass found the NodePool gone or not an edge pool (most likely so again). A new pool's pass reads them too.
 */
function mayHaveObjects(previous: PoolReconcileState): boolean {
  return previous.outcome !== 'gone' && previous.outcome !== 'not-edge';
}

/**
 * Records the pass's outcome, which releases the lease. Returns whether another invocation asked for one
 * more pass meanwhile, or `superseded` if our lease lapsed and a newer holder's view of the pool stands
 * (a failed pass then still throws its failure).
 */
async function recordPass(
  run: Run,
  lease: Acquired,
  ran: PassRun,
  pass: number,
): Promise<{ requeue: boolean } | 'superseded'> {
  const { deps, target } = run;
  try {
    return await recordOutcome(
      run.table,
      lease.lease,
      lease.previous,
      {
        outcome: ran.converged?.outcome ?? 'error',
        observedGeneration: ran.converged?.observedGeneration ?? lease.previous.observedGeneration,
        desiredHash: ran.converged?.desiredHash ?? lease.previous.desiredHash,
        error: ran.failure,
        durationMs: ran.durationMs,
        eventId: pass === 1 ? target.eventId : undefined,
        passStartedAt: lease.passStartedAt,
        pkiProof: ran.converged?.pkiProof,
      },
      deps.clock(),
    );
  } catch (err) {
    if (!(err instanceof LeaseLostError)) throw err;
    deps.logger.warn('lease lost before the outcome was recorded; a newer invocation owns this pool', {
      token: lease.lease.token,
    });
    if (ran.converged === undefined) throw failed(ran.failure);
    return 'superseded';
  }
}

/**
 * Logs and counts a recorded pass, and ends the invocation where the pass asks to: a failure is thrown
 * (retried, requeued or dead-lettered by its kind, core/outcome.ts), and so is a pass that completed but
 * waits on something expected to happen by itself.
 */
function reportPass(run: Run, ran: PassRun, pass: number): ConvergeOutcome {
  const { deps, target } = run;
  const { logger, metrics } = deps;
  if (ran.converged === undefined) {
    const thrown = failed(ran.failure);
    const outcome = outcomeOf(thrown);
    if (outcome === 'requeue') {
      logger.info('not finished yet; requeued', {
        why: sanitizeErrorMessage(ran.failure, 500),
        afterMs: (ran.failure as RequeueError).afterMs,
      });
      metrics.addMetric('ReconcileRequeues', MetricUnit.Count, 1);
    } else if (outcome === 'retry') {
      logger.error('reconcile failed', {
        error: sanitizeErrorMessage(ran.failure, 500),
        durationMs: Math.round(ran.durationMs),
      });
      metrics.addMetric('ReconcileErrors', MetricUnit.Count, 1);
    }
    // A terminal error is logged once, by the handler that records its dead letter.
    throw thrown;
  }
  const { converged } = ran;
  if (converged.outcome === 'requeued') {
    // An event platform redelivers only what fails, so the wish to look again leaves the function as a
    // RequeueError (logged and counted as a requeue, never as an error).
    const afterMs = converged.requeueAfterMs ?? 0;
    logger.info('not finished yet; requeued', { why: converged.requeueReason, afterMs });
    metrics.addMetric('ReconcileRequeues', MetricUnit.Count, 1);
    throw new RequeueError(converged.requeueReason ?? `pool ${target.nodePool} is not finished yet`, afterMs);
  }
  logger.info('reconciled', {
    outcome: converged.outcome,
    clusterWrites: converged.clusterWrites,
    applied: converged.applied,
    durationMs: Math.round(ran.durationMs),
    pass,
  });
  return converged.outcome;
}

/**
 * Waits up to `lockedWaitMs` for a held lease to be released or to lapse, polling the item with reads (a
 * write per look would spend the table's write budget), then tries once more to take it. Most contention is
 * a live holder finishing within a second or two; its release is then found here, and this invocation runs
 * its own pass instead of failing to a platform retry. At the deadline it tries once more (the same
 * conditional write that found the lease held, and it asks the holder for one more pass again).
 */
async function awaitLease(run: Run, event: TriggeringEvent | undefined): Promise<BeginResult> {
  const { deps, table, key } = run;
  const deadline = performance.now() + deps.lockedWaitMs;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return begin(run, event);
    await new Promise((resolve) => setTimeout(resolve, Math.min(LOCKED_POLL_MS, left)));
    const item = await getItem(table, keys.pool(key.clusterId, key.nodePool));
    const heldUntil = item?.[LEASE_UNTIL];
    const held =
      item?.[LEASE_OWNER] !== undefined && typeof heldUntil === 'number' && heldUntil > deps.clock().getTime();
    if (!held) {
      // A released lease can be taken again at once by its holder, for the pass this invocation asked of it:
      // that is still a live holder, worth the rest of the wait.
      const begun = await begin(run, event);
      if (begun.status !== 'locked' || performance.now() >= deadline) return begun;
    }
  }
}

/** Takes the pool's lease for a pass, for no longer than the invocation can act. */
function begin(run: Run, event: TriggeringEvent | undefined): Promise<BeginResult> {
  const { deps, invocation } = run;
  const now = deps.clock();
  return beginReconcile(run.table, run.key, invocation.id, leaseTtlAt(deps.leaseTtlMs, invocation, now), now, event);
}

/**
 * What is thrown for a failed pass: our own outcome errors as they are (built safe); an error the shared
 * contract knows as terminal (a cluster access the policy refuses) as a TerminalError, since sanitising it
 * into a plain Error would put it on the retry path; anything else sanitised.
 */
function failed(err: unknown): unknown {
  const terminal = terminalReasonOf(err);
  if (terminal) return err instanceof TerminalError ? err : new TerminalError(terminal);
  return outcomeOf(err) === 'retry' ? safeError(err) : err;
}

/**
 * What leaves the function (to Lambda, the bus's retry log and the DLQ) carries a sanitised message only:
 * apiserver errors can echo request bodies, and those can hold key material.
 */
function safeError(err: unknown): Error {
  const safe = new Error(sanitizeErrorMessage(err, 1000));
  safe.name = err instanceof Error ? err.name : 'ReconcileError';
  return safe;
}
