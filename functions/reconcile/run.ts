/**
 * One reconcile invocation for one (cluster, NodePool) key: take the pool's lease (which also refuses an
 * event id already handled), converge, record the outcome (which releases the lease) — two table writes.
 * If another invocation asked for another pass while we held the lease, run again (bounded).
 *
 * How it ends (core/outcome.ts, docs/reconcile.md "Outcomes"): a result is `done`; a RequeueError (the
 * pool still being deleted, or its lease held by another invocation) is `requeue`; a TerminalError (an
 * unregistered cluster, an access the policy refuses) is `terminal` and goes to the handler, which records
 * the dead letter; anything else is `retry` and is thrown for the platform to retry.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { StateTable } from '../../adapters/state-table/index.ts';
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
import type { BeginResult, ReconcileOutcome, TriggeringEvent } from '../../adapters/state-table/index.ts';
import type { ReconcileDeps } from './deps.ts';
import type { ReconcileTarget } from './trigger.ts';
import { converge } from './converge.ts';
import type { ConvergeResult } from './converge.ts';
import { outcomeOf, RequeueError, TerminalError } from '../../core/outcome.ts';
import { terminalReasonOf, unknownCluster } from '../common/terminal.ts';

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

export async function reconcile(
  deps: ReconcileDeps,
  target: ReconcileTarget,
  invocationId: string,
): Promise<ReconcileResult> {
  const { logger, metrics } = deps;
  const metered = meteredTable(deps.table);
  const table: StateTable = metered.table;
  const key = { clusterId: target.clusterId, nodePool: target.nodePool };
  const summary: ReconcileResult = {
    result: 'unchanged',
    ...key,
    passes: 0,
    clusterWrites: 0,
    tableWriteUnits: 0,
    applied: [],
  };
  const finish = (result: ReconcileResultKind): ReconcileResult => {
    summary.result = result;
    summary.tableWriteUnits = metered.writeUnits();
    metrics.addMetric('TableWriteUnits', MetricUnit.Count, summary.tableWriteUnits);
    metrics.addMetric('ClusterWrites', MetricUnit.Count, summary.clusterWrites);
    return summary;
  };

  const finishServed = (by: { by: string; passStartedAt: number }): ReconcileResult => {
    logger.info('a later pass already read the cluster after this event; nothing to do', {
      eventTime: new Date(target.acceptedAt).toISOString(),
      by: by.by,
      passStartedAt: new Date(by.passStartedAt).toISOString(),
    });
    metrics.addMetric('ServedEvents', MetricUnit.Count, 1);
    return finish('served');
  };
  // One round trip before any write: a served event ends here, and a cluster nobody registered must not
  // leave a lease item behind (anyone who can put events could otherwise grow the table one item per
  // invented name).
  const { served, registration } = await readInvocationStart(table, key, target.acceptedAt, deps.clock());
  if (served) return finishServed(served);
  if (!registration) throw unknownCluster(target.clusterId, 'detail.clusterId');

  for (let pass = 1; pass <= deps.maxPasses; pass++) {
    const event = pass === 1 ? { id: target.eventId, acceptedAt: target.acceptedAt } : undefined;
    let begun = await beginReconcile(table, key, invocationId, deps.leaseTtlMs, deps.clock(), event);
    // Only the first pass waits: a later pass that finds the pool taken leaves it to that holder (below).
    if (begun.status === 'locked' && pass === 1) begun = await awaitLease(deps, table, key, invocationId, event);
    if (begun.status === 'duplicate') {
      logger.info('event already reconciled; nothing to do', { eventId: target.eventId });
      metrics.addMetric('DuplicateEvents', MetricUnit.Count, 1);
      return finish('duplicate');
    }
    if (begun.status === 'served') return finishServed(begun);
    if (begun.status === 'locked' && pass > 1) {
      // Our own event was served by pass 1. The invocation that took the pool since reads the cluster after
      // every ask we were serving; if it dies, its own event is not acknowledged either.
      logger.info('another invocation took the pool for the next pass', {
        heldUntil: new Date(begun.heldUntil).toISOString(),
      });
      break;
    }
    if (begun.status === 'locked') {
      // Still held after a short wait. The holder has been asked to run once more for our notice, but only a
      // live holder will: one that was killed or timed out holding the lease never records its outcome. So
      // the notice is not acknowledged: it is requeued, and a redelivery finds the pool converged (a cheap,
      // read-only pass) or, once the lease has lapsed, takes over a dead holder's pool (docs/reconcile.md,
      // "Outcomes").
      const afterMs = Math.min(
        Math.max(0, begun.heldUntil - deps.clock().getTime()) + LEASE_LAPSE_MARGIN_MS,
        LOCKED_RECHECK_MS,
      );
      logger.info('pool is being reconciled by another invocation; requeued', {
        heldUntil: new Date(begun.heldUntil).toISOString(),
        afterMs,
      });
      metrics.addMetric('LeaseContention', MetricUnit.Count, 1);
      // Lambda counts the requeue among its Errors; the errors alarm subtracts this count (serverless.yml).
      metrics.addMetric('ReconcileRequeues', MetricUnit.Count, 1);
      throw new RequeueError(
        `pool ${target.nodePool} is being reconciled by another invocation until ${new Date(begun.heldUntil).toISOString()}`,
        afterMs,
      );
    }
    summary.passes = pass;
    const started = performance.now();
    let result: ConvergeResult | undefined;
    let failure: unknown;
    try {
      result = await converge(deps, target, registration);
    } catch (err) {
      failure = err;
    }
    const durationMs = performance.now() - started;
    metrics.addMetric('ReconcileDuration', MetricUnit.Milliseconds, durationMs);
    if (result) {
      summary.clusterWrites += result.clusterWrites;
      summary.applied.push(...result.applied);
    } else {
      summary.clusterWrites += (failure as { clusterWrites?: number })?.clusterWrites ?? 0;
    }
    let requeue = false;
    try {
      ({ requeue } = await recordOutcome(
        table,
        begun.lease,
        begun.previous,
        {
          outcome: result?.outcome ?? 'error',
          observedGeneration: result?.observedGeneration ?? begun.previous.observedGeneration,
          desiredHash: result?.desiredHash ?? begun.previous.desiredHash,
          error: failure,
          durationMs,
          eventId: pass === 1 ? target.eventId : undefined,
          passStartedAt: begun.passStartedAt,
        },
        deps.clock(),
      ));
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
      // Our lease lapsed and a newer invocation holds it: its view of the pool wins, ours is dropped.
      logger.warn('lease lost before the outcome was recorded; a newer invocation owns this pool', {
        token: begun.lease.token,
      });
      if (failure) throw failed(failure);
      return finish('superseded');
    }
    if (failure) {
      const thrown = failed(failure);
      const outcome = outcomeOf(thrown);
      if (outcome === 'requeue') {
        logger.info('not finished yet; requeued', {
          why: sanitizeErrorMessage(failure, 500),
          afterMs: (failure as RequeueError).afterMs,
        });
        metrics.addMetric('ReconcileRequeues', MetricUnit.Count, 1);
      } else if (outcome === 'retry') {
        logger.error('reconcile failed', {
          error: sanitizeErrorMessage(failure, 500),
          durationMs: Math.round(durationMs),
        });
        metrics.addMetric('ReconcileErrors', MetricUnit.Count, 1);
      }
      // A terminal error is logged once, by the handler that records its dead letter.
      throw thrown;
    }
    if (result!.outcome === 'requeued') {
      // The pass completed but waits on something expected to happen by itself. An event platform
      // redelivers only what fails, so the wish to look again leaves the function as a RequeueError
      // (logged and counted as a requeue, never as an error).
      const afterMs = result!.requeueAfterMs ?? 0;
      logger.info('not finished yet; requeued', { why: result!.requeueReason, afterMs });
      metrics.addMetric('ReconcileRequeues', MetricUnit.Count, 1);
      throw new RequeueError(result!.requeueReason ?? `pool ${target.nodePool} is not finished yet`, afterMs);
    }
    logger.info('reconciled', {
      outcome: result!.outcome,
      clusterWrites: result!.clusterWrites,
      applied: result!.applied,
      durationMs: Math.round(durationMs),
      pass,
    });
    // Across passes, "applied" wins over a later pass that found nothing left to do.
    if (!(summary.result === 'applied' && result!.outcome === 'unchanged')) summary.result = result!.outcome;
    if (!requeue) break;
    logger.info('another invocation asked for one more pass');
  }
  return finish(summary.result);
}

/**
 * Waits up to `lockedWaitMs` for a held lease to be released or to lapse, polling the item with reads (a
 * write per look would spend the table's write budget), then tries once more to take it. Most contention is
 * a live holder finishing within a second or two; its release is then found here, and this invocation runs
 * its own pass instead of failing to a platform retry. At the deadline it tries once more (the same
 * conditional write that found the lease held, and it asks the holder for one more pass again).
 */
async function awaitLease(
  deps: ReconcileDeps,
  table: StateTable,
  key: { clusterId: string; nodePool: string },
  invocationId: string,
  event: TriggeringEvent | undefined,
): Promise<BeginResult> {
  const deadline = performance.now() + deps.lockedWaitMs;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return beginReconcile(table, key, invocationId, deps.leaseTtlMs, deps.clock(), event);
    await new Promise((resolve) => setTimeout(resolve, Math.min(LOCKED_POLL_MS, left)));
    const item = await getItem(table, keys.pool(key.clusterId, key.nodePool));
    const heldUntil = item?.[LEASE_UNTIL];
    const held =
      item?.[LEASE_OWNER] !== undefined && typeof heldUntil === 'number' && heldUntil > deps.clock().getTime();
    if (!held) return beginReconcile(table, key, invocationId, deps.leaseTtlMs, deps.clock(), event);
  }
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
