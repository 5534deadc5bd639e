/**
 * Per-pool reconcile state, and the reconcile's lease and event dedupe on the same item.
 *
 * Write budget (target ≤ 3 write units per reconcile; this design spends 2):
 *   1. `beginReconcile`: ONE conditional UpdateItem takes the lease (free or lapsed), bumps the fencing
 *      token and refuses an event id already in the item's short `recentEvents` list (dedupe).
 *   2. `recordOutcome`: ONE conditional UpdateItem, fenced by owner + token, writes the outcome, appends
 *      the event id to `recentEvents` and releases the lease.
 * Powertools idempotency would add an INPROGRESS put and a COMPLETED update (2 more units) on a separate
 * item keyed by the event id, and its record cannot double as a per-*pool* lease (different key), so we
 * fold dedupe into the lease item instead. The item is kept under 1 KB (short error, at most 4 event ids)
 * so each write costs exactly 1 unit.
 *
 * Dedupe semantics match Powertools': an event id is remembered only once its reconcile completed (an
 * error releases the lease without remembering the id, so a retry of that event runs again); a duplicate
 * arriving while the first is still running finds the lease held.
 *
 * A second invocation that finds the lease held does not just drop its notice (the holder may have read
 * the cluster before the change it announces): it sets `requeue` on the item, and the holder, seeing the
 * flag in its outcome write's old image, runs one more pass. That costs writes only under contention.
 *
 * A notice that a later pass already served is not run again (docs/decisions/0026-notices-served-by-a-later-pass.md):
 * every pass records when it took the lease (`passStartedAt`), and a pass that completes records that time as
 * `servedFrom`. A pass reads the cluster after it took the lease, so it saw every change the bus had accepted
 * a notice of before then. A notice accepted at `t` (EventBridge's `time`, whole seconds) is served once
 * `servedFrom` (or a live holder's `passStartedAt`) is past `t` + EVENT_TIME_UNCERTAINTY_MS: the same
 * conditional write refuses it, and nothing is written.
 */

import type { PkiProof } from '../../core/render/pki.ts';
import { emptyParts, mergeParts, renderUpdate, setAttributes } from './expression.ts';
import type { ItemKey } from './keys.ts';
import { CLUSTER_PREFIX, keys, POOL_PREFIX, prefixes, TTL_ATTRIBUTE, ttlAfter } from './keys.ts';
import type { Lease } from './lease.ts';
import { acquireLease, holderParts, LEASE_OWNER, LEASE_UNTIL, LeaseLostError, releaseParts } from './lease.ts';
import { type ClusterRegistration, registrationFromItem } from './registry.ts';
import { sanitizeErrorMessage } from './sanitize.ts';
import type { Item, StateTable } from './table.ts';
import { getItem, getItems, isConditionFailed, queryAll, updateItem } from './table.ts';

export type ReconcileOutcome =
  | 'applied' // something was written to the cluster
  | 'unchanged' // converged already: zero cluster writes
  | 'invalid' // spec rejected; status says which field
  | 'paused'
  | 'not-edge' // NodePool is Cloud or opted out; nothing of ours remains
  | 'gone' // NodePool no longer exists
  | 'requeued' // waiting on something expected to happen by itself; looked at again later
  | 'error';

export interface PoolReconcileState {
  clusterId: string;
  nodePool: string;
  observedGeneration?: number;
  desiredHash?: string;
  outcome?: ReconcileOutcome;
  /** Reconciles recorded for this pool, ever. */
  attempts: number;
  /** Consecutive reconciles that ended in `error` (0 after any other outcome). */
  failures: number;
  lastError?: string;
  durationMs?: number;
  updatedAt?: string;
  /** Ids of the last few events whose reconcile completed (dedupe window). */
  recentEvents: string[];
  /** What the last pass that rendered the pool said of its PKI (core/render/pki.ts, PkiProof). */
  pkiProof?: PkiProof;
}

export interface OutcomeRecord {
  outcome: ReconcileOutcome;
  observedGeneration?: number;
  desiredHash?: string;
  error?: unknown;
  durationMs: number;
  /** The triggering event; remembered for dedupe unless the outcome is `error`. */
  eventId?: string;
  /**
   * When this pass took the lease (BeginResult.passStartedAt). A pass that completed (any outcome but
   * `error` and `requeued`) serves every event accepted before it (docs/decisions/0026).
   */
  passStartedAt?: number;
  /** Kept for the pool's next pass (PoolReconcileState.pkiProof); the stored one stays when absent. */
  pkiProof?: PkiProof;
}

export const RECENT_EVENTS_KEPT = 4;
/** A pool's state lingers this long after the NodePool is gone (audits can still report it), then TTL. */
export const GONE_RETENTION_MS = 7 * 24 * 3600 * 1000;
/**
 * A pool whose every reconcile so far failed keeps its state this long after the last failure, then TTL:
 * an event naming a pool that never existed must not leave an item forever. The first outcome that is not
 * an error removes the TTL again.
 */
export const NEVER_CONVERGED_RETENTION_MS = 7 * 24 * 3600 * 1000;

export type BeginResult =
  | { status: 'acquired'; lease: Lease; previous: PoolReconcileState; passStartedAt: number }
  | { status: 'locked'; heldBy: string; heldUntil: number }
  | { status: 'duplicate' }
  /** A pass that took the lease after the bus accepted this event read the cluster: nothing left to do. */
  | { status: 'served'; by: 'completed-pass' | 'running-pass'; passStartedAt: number };

/**
 * How far an event's `time` may lie before the true moment its cause was written: EventBridge gives it in
 * whole seconds (up to 1 s early), plus 1 s for the clocks of the bus and the functions to disagree.
 */
export const EVENT_TIME_UNCERTAINTY_MS = 2000;
export const PASS_STARTED_AT = 'passStartedAt';
export const SERVED_FROM = 'servedFrom';

/** The event that asked for this pass: its id (dedupe) and the time the bus accepted it (epoch ms). */
export interface TriggeringEvent {
  id: string;
  acceptedAt?: number;
}

function toState(item: Item | undefined, clusterId: string, nodePool: string): PoolReconcileState {
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    clusterId,
    nodePool,
    observedGeneration: num(item?.observedGeneration),
    desiredHash: str(item?.desiredHash),
    outcome: str(item?.outcome) as ReconcileOutcome | undefined,
    attempts: num(item?.attempts) ?? 0,
    failures: num(item?.failures) ?? 0,
    lastError: str(item?.lastError),
    durationMs: num(item?.durationMs),
    updatedAt: str(item?.updatedAt),
    recentEvents: Array.isArray(item?.recentEvents) ? (item.recentEvents as string[]) : [],
    pkiProof: pkiProofOf(item?.[PKI_PROOF]),
  };
}

/** Where a pool's item keeps its PkiProof: one string, `key notAfter caNotAfter` (about 110 bytes). */
export const PKI_PROOF = 'pkiProof';

function pkiProofOf(value: unknown): PkiProof | undefined {
  if (typeof value !== 'string') return undefined;
  const [key, notAfter, caNotAfter, ...rest] = value.split(' ');
  if (rest.length > 0 || key === undefined || !/^[0-9a-f]{64}$/.test(key) || !notAfter || !caNotAfter) return undefined;
  if (Number.isNaN(Date.parse(notAfter)) || Number.isNaN(Date.parse(caNotAfter))) return undefined;
  return { key, notAfter, caNotAfter };
}

export async function beginReconcile(
  table: StateTable,
  target: { clusterId: string; nodePool: string },
  owner: string,
  ttlMs: number,
  now: Date,
  event?: string | TriggeringEvent,
): Promise<BeginResult> {
  const key = keys.pool(target.clusterId, target.nodePool);
  const { id: eventId, acceptedAt } = typeof event === 'string' ? { id: event, acceptedAt: undefined } : (event ?? {});
  const dedupe = emptyParts();
  // A requeue asked of an earlier holder is served by this pass: it reads the cluster after the request.
  dedupe.names['#requeue'] = 'requeue';
  dedupe.remove.push('#requeue');
  dedupe.names['#passStartedAt'] = PASS_STARTED_AT;
  dedupe.values[':passStartedAt'] = now.getTime();
  dedupe.set.push('#passStartedAt = :passStartedAt');
  if (eventId) {
    dedupe.names['#recentEvents'] = 'recentEvents';
    dedupe.values[':eventId'] = eventId;
    dedupe.conditions.push('NOT contains(#recentEvents, :eventId)');
  }
  // Passes that began after the event's cause was written saw it (docs/decisions/0026).
  const servedAfter = servedAfterOf(acceptedAt);
  if (servedAfter !== undefined) {
    dedupe.names['#servedFrom'] = SERVED_FROM;
    dedupe.values[':servedAfter'] = servedAfter;
    dedupe.conditions.push('attribute_not_exists(#servedFrom) OR #servedFrom <= :servedAfter');
  }
  // Two attempts: the first may lose a race with a holder that releases between our write and our read.
  for (let attempt = 0; attempt < 2; attempt++) {
    const res = await acquireLease(table, key, owner, ttlMs, now, { extra: dedupe });
    if (res.acquired) {
      return {
        status: 'acquired',
        lease: res.lease,
        previous: toState(res.item, target.clusterId, target.nodePool),
        passStartedAt: now.getTime(),
      };
    }
    const seen =
      Array.isArray(res.item?.recentEvents) &&
      eventId !== undefined &&
      (res.item.recentEvents as unknown[]).includes(eventId);
    if (seen) return { status: 'duplicate' };
    const served = servedBy(res.item, servedAfter, now);
    if (served) return served;
    if (res.heldBy !== undefined) {
      if (await markRequeue(table, key, now)) return { status: 'locked', heldBy: res.heldBy, heldUntil: res.heldUntil };
    }
  }
  // Pathological churn: report as locked; the event's retry or the next audit converges it.
  return { status: 'locked', heldBy: 'unknown', heldUntil: now.getTime() };
}

const servedAfterOf = (acceptedAt: number | undefined) =>
  acceptedAt === undefined ? undefined : acceptedAt + EVENT_TIME_UNCERTAINTY_MS;

type Served = Extract<BeginResult, { status: 'served' }>;

/**
 * Whether the pool's item shows a pass that took the lease after `servedAfter`: one that completed, or a
 * live holder. Asking a live holder for one more pass would only repeat what it does; if it fails, its own
 * event is retried (functions/reconcile/run.ts).
 */
function servedBy(item: Item | undefined, servedAfter: number | undefined, now: Date): Served | undefined {
  if (servedAfter === undefined || !item) return undefined;
  const servedFrom = item[SERVED_FROM];
  if (typeof servedFrom === 'number' && servedFrom > servedAfter)
    return { status: 'served', by: 'completed-pass', passStartedAt: servedFrom };
  const holderStarted = item[PASS_STARTED_AT];
  const heldUntil = item[LEASE_UNTIL];
  const held = item[LEASE_OWNER] !== undefined && typeof heldUntil === 'number' && heldUntil > now.getTime();
  if (held && typeof holderStarted === 'number' && holderStarted > servedAfter)
    return { status: 'served', by: 'running-pass', passStartedAt: holderStarted };
  return undefined;
}

/**
 * What an invocation looks at before anything else, in one round trip (BatchGetItem, no write): the
 * pool's item, to see whether a later pass already served the event (most notices of a busy pool arrive
 * after one did), and the cluster's registration (a cluster nobody registered gets no lease item). One
 * batch instead of two GetItems saves a round trip on every invocation; both reads are consistent, as a
 * batch has one ConsistentRead for the table (the pool's item costs 1 read unit instead of 0.5). A
 * "not served" answer is checked again by beginReconcile's conditional write.
 */
export async function readInvocationStart(
  table: StateTable,
  target: { clusterId: string; nodePool: string },
  acceptedAt: number,
  now: Date,
): Promise<{ served?: Served; registration?: ClusterRegistration }> {
  const [pool, cluster] = await getItems(table, [
    keys.pool(target.clusterId, target.nodePool),
    keys.cluster(target.clusterId),
  ]);
  return {
    served: servedBy(pool, servedAfterOf(acceptedAt), now),
    registration: cluster ? registrationFromItem(cluster) : undefined,
  };
}

/** Asks the current holder for one more pass. False when nobody holds the lease any more. */
async function markRequeue(table: StateTable, key: ItemKey, now: Date): Promise<boolean> {
  try {
    await updateItem(table, {
      Key: key,
      UpdateExpression: 'SET #requeue = :true',
      ConditionExpression: 'attribute_exists(#leaseOwner) AND #leaseUntil > :now',
      ExpressionAttributeNames: { '#requeue': 'requeue', '#leaseOwner': LEASE_OWNER, '#leaseUntil': LEASE_UNTIL },
      ExpressionAttributeValues: { ':true': true, ':now': now.getTime() },
    });
    return true;
  } catch (err) {
    if (isConditionFailed(err)) return false;
    throw err;
  }
}

/**
 * Records the outcome and releases the lease in one fenced write. Throws LeaseLostError when a newer
 * holder took over (our lease lapsed): the stale result is dropped, the newer holder's stands.
 * Returns whether another invocation asked for one more pass while we held the lease.
 */
export async function recordOutcome(
  table: StateTable,
  lease: Lease,
  previous: PoolReconcileState,
  record: OutcomeRecord,
  now: Date,
): Promise<{ requeue: boolean }> {
  const failed = record.outcome === 'error';
  const recentEvents =
    record.eventId && !failed && !previous.recentEvents.includes(record.eventId)
      ? [...previous.recentEvents, record.eventId].slice(-RECENT_EVENTS_KEPT)
      : undefined;
  const attrs = setAttributes({
    outcome: record.outcome,
    observedGeneration: record.observedGeneration,
    desiredHash: record.desiredHash,
    failures: failed ? previous.failures + 1 : 0,
    lastError: failed ? sanitizeErrorMessage(record.error) : null,
    durationMs: Math.round(record.durationMs),
    updatedAt: now.toISOString(),
    recentEvents,
    requeue: null,
    [PKI_PROOF]: record.pkiProof
      ? `${record.pkiProof.key} ${record.pkiProof.notAfter} ${record.pkiProof.caNotAfter}`
      : undefined,
    [TTL_ATTRIBUTE]: expiryOf(record.outcome, previous, now),
    ...(record.passStartedAt !== undefined && record.outcome !== 'error' && record.outcome !== 'requeued'
      ? { [SERVED_FROM]: record.passStartedAt }
      : {}),
  });
  attrs.names['#attempts'] = 'attempts';
  attrs.values[':attemptsOne'] = 1;
  attrs.add.push('#attempts :attemptsOne');
  const parts = mergeParts(holderParts(lease), attrs, releaseParts());
  try {
    const out = await updateItem(table, { Key: lease.key, ...renderUpdate(parts), ReturnValues: 'ALL_OLD' });
    return { requeue: out.Attributes?.requeue === true };
  } catch (err) {
    if (isConditionFailed(err)) throw new LeaseLostError(lease.key, lease.owner);
    throw err;
  }
}

/** The item's TTL after this outcome: gone pools and pools that never converged expire; others are kept. */
function expiryOf(outcome: ReconcileOutcome, previous: PoolReconcileState, now: Date): number | null {
  if (outcome === 'gone') return ttlAfter(now, GONE_RETENTION_MS);
  const neverConverged =
    previous.outcome === undefined || (previous.outcome === 'error' && previous.observedGeneration === undefined);
  if (outcome === 'error' && neverConverged) return ttlAfter(now, NEVER_CONVERGED_RETENTION_MS);
  return null;
}

export async function readPoolState(
  table: StateTable,
  clusterId: string,
  nodePool: string,
): Promise<PoolReconcileState | undefined> {
  const item = await getItem(table, keys.pool(clusterId, nodePool));
  return item ? toState(item, clusterId, nodePool) : undefined;
}

/** Every pool of a cluster that has ever been reconciled (one Query on the cluster's partition). */
export async function listPoolStates(table: StateTable, clusterId: string): Promise<PoolReconcileState[]> {
  const pk = keys.pool(clusterId, 'x').pk;
  const items = await queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': prefixes.pools },
  });
  return items.map((item) =>
    toState(item, String(item.pk).slice(CLUSTER_PREFIX.length), String(item.sk).slice(POOL_PREFIX.length)),
  );
}
