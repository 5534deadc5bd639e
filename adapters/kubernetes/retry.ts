/**
 * Retries for apiserver calls: 429 (throttled), 5xx and transport failures/timeouts are transient; any
 * other 4xx is an answer (bad request, forbidden, not found, conflict) that a retry will not change.
 * Every call the reconcile makes is safe to repeat: reads, server-side apply (idempotent by design),
 * status apply, delete (404 treated as done) and Event create (409 treated as done).
 */

import type { IPolicy } from 'cockatiel';
import { ExponentialBackoff, handleWhen, retry, TaskCancelledError, TimeoutStrategy, timeout, wrap } from 'cockatiel';

export interface RetryOptions {
  /** Attempts in total, including the first. */
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Per-attempt timeout. */
  attemptTimeoutMs?: number;
}

const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export function isTransient(err: unknown): boolean {
  if (err instanceof TaskCancelledError) return true;
  const status = statusOf(err);
  if (status !== undefined) return status === 429 || status >= 500;
  const e = err as { code?: unknown; errno?: unknown; type?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  if (code && TRANSIENT_CODES.has(code)) return true;
  // node-fetch wraps transport failures as FetchError type 'system'.
  return e?.type === 'system' || e?.type === 'request-timeout';
}

export function retryPolicy(options: RetryOptions = {}, onRetry?: () => void): IPolicy {
  const retrying = retry(handleWhen(isTransient), {
    maxAttempts: (options.maxAttempts ?? 4) - 1,
    backoff: new ExponentialBackoff({
      initialDelay: options.initialDelayMs ?? 100,
      maxDelay: options.maxDelayMs ?? 2_000,
    }),
  });
  if (onRetry) retrying.onRetry(() => onRetry());
  // A timeout aborts the attempt's signal (which ends its request); an attempt that returned has nothing
  // left to cancel, and aborting it anyway built a DOMException with a stack on every call (1.8% of a
  // converged pool's reconcile in a profile).
  return wrap(
    retrying,
    timeout(options.attemptTimeoutMs ?? 10_000, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false }),
  );
}
