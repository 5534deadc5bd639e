/**
 * How one unit of work (a reconcile pass, an audit, a probe, a rollout step) ends, modelled on
 * controller-runtime's `Reconcile(ctx, Request) (Result, error)`:
 *
 * | outcome    | controller-runtime                 | here                                                      |
 * |------------|------------------------------------|-----------------------------------------------------------|
 * | `done`     | `Result{}`, nil                    | the handler returns its result                            |
 * | `requeue`  | `Result{RequeueAfter: d}`, nil     | `RequeueError`: not failed, not finished; run again later |
 * | `retry`    | `Result{}`, err                    | any other thrown error: the platform retries with backoff |
 * | `terminal` | `reconcile.TerminalError(err)`     | `TerminalError`: recorded as a dead letter once, no retry |
 *
 * Terminal means *this input* can never succeed, whatever happens to the world meanwhile (a detail that
 * fails its schema, a name that cannot be a table key, a cluster nobody registered). Anything that can heal
 * by itself (an apiserver 5xx or 429, a timeout, a throttled table) stays on the retry path.
 */

/**
 * Why an input can never succeed:
 *  - `invalid-event`: the event (or direct input) fails its schema, is not JSON, or is too large or deep;
 *  - `unknown-detail-type`: a detail-type this function does not take (a rule routed what it should not);
 *  - `unkeyable-name`: a name that can never be a state-table key (upper case, `#`, too long);
 *  - `unknown-cluster`: the event names a cluster that is not in the registry;
 *  - `access-refused`: the cluster is registered, but the access policy refuses its access as loaded (an exec
 *    credential or a file reference in a kubeconfig registered by path or kept in a secret, a metadata
 *    address): every load is refused alike until an operator changes the registration or its source;
 *  - `unsupported-cluster`: the cluster serves no NodePool version the product reads (OpenYurt missing, or
 *    older than v1.0): no pass can succeed until its CRDs change, and a change of them is a new event;
 *  - `not-found`: the input names something else that does not exist (a rollout id);
 *  - `conflict`: the input contradicts what is stored (a rollout id reused with another spec).
 */
export const TERMINAL_KINDS = [
  'invalid-event',
  'unknown-detail-type',
  'unkeyable-name',
  'unknown-cluster',
  'access-refused',
  'unsupported-cluster',
  'not-found',
  'conflict',
] as const;
export type TerminalKind = (typeof TERMINAL_KINDS)[number];

/** `kind` is for machines (alarms, DLQ triage), `message` for people. */
export interface TerminalReason {
  kind: TerminalKind;
  /**
   * Path of the offending field in the input (`detail.clusterId`), when one field is at fault; for
   * `access-refused`, the field of the cluster's access the policy refused (`users[0].user.exec`, `access.url`).
   */
  field?: string;
  /** What is wrong, in words; never a secret (built from our own wording and the input's names only). */
  message: string;
}

export class TerminalError extends Error {
  readonly reason: TerminalReason;
  constructor(reason: TerminalReason) {
    super(`${reason.kind}${reason.field ? ` at ${reason.field}` : ''}: ${reason.message}`);
    this.name = 'TerminalError';
    this.reason = reason;
  }
}

/**
 * Not finished and not failed: the work waits on something expected to happen by itself (a PoolSpirit still
 * being garbage-collected). `afterMs` is the wish; an event-driven platform redelivers on its own schedule.
 */
export class RequeueError extends Error {
  readonly afterMs: number;
  constructor(message: string, afterMs = 30_000) {
    super(message);
    this.name = 'RequeueError';
    this.afterMs = afterMs;
  }
}

export type Outcome = 'done' | 'requeue' | 'retry' | 'terminal';

/** The outcome a thrown value stands for (a returned value is `done`). */
export function outcomeOf(err: unknown): Exclude<Outcome, 'done'> {
  if (err instanceof TerminalError) return 'terminal';
  if (err instanceof RequeueError) return 'requeue';
  return 'retry';
}
