import type { PutEventsRequestEntry, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import { entrySize, MAX_BYTES_PER_CALL, toBatches } from './entry-size.ts';

/** The one thing the sender needs from EventBridge; throws when the whole call fails. */
export interface PutEventsPort {
  putEvents(entries: PutEventsRequestEntry[]): Promise<PutEventsResultEntry[]>;
}

/**
 * Every new pool waits this long at each notice it needs (two or three per change). At 50 ms a single
 * change became Available at p50 365 ms against 739 ms at 200 ms, while still merging 16 of the 23
 * notices the 200 ms window merged (dev/bench/latency.ts, docs/decisions/0020-latency-coalescing-window-and-concurrency.md).
 */
export const DEFAULT_COALESCE_WINDOW_MS = 50;

export interface SenderOptions {
  /**
   * How long a key's notices are merged before sending (ms); default DEFAULT_COALESCE_WINDOW_MS, chosen from
   * measured event-to-Available latency (docs/latency.md).
   */
  coalesceWindowMs?: number;
  /** Keys held (pending + being sent) before enqueue() makes callers wait. */
  maxPendingKeys?: number;
  maxBatchesInFlight?: number;
  initialRetryDelayMs?: number;
  maxRetryDelayMs?: number;
  now?: () => number;
  /** Called once for each entry the bus refused for good (a non-retryable ErrorCode); default: nothing. */
  onRejected?: (rejection: Rejection) => void;
}

/** An entry the bus refused with an error that resending cannot fix. */
export interface Rejection {
  key: string;
  errorCode: string;
  errorMessage: string;
}

/**
 * PutEvents' per-entry errors that EventBridge documents as non-retryable (PutEventsResultEntry.ErrorCode).
 * Resending such an entry fails the same way every time, so it is counted, reported and dropped; any other
 * code (InternalFailure, ThrottlingException, one added later) is resent with backoff.
 */
export const NON_RETRYABLE_ENTRY_ERRORS: ReadonlySet<string> = new Set([
  'AccessDeniedException',
  'InvalidAccountIdException',
  'InvalidArgument',
  'MalformedDetail',
  'RedactionFailure',
  'NotAuthorizedForSourceException',
  'NotAuthorizedForDetailTypeException',
]);
const KEPT_REJECTIONS = 20;

export interface SenderStats {
  received: number;
  coalesced: number;
  sent: number;
  batches: number;
  failedEntryAttempts: number;
  failedCalls: number;
  /** Entries refused for good (non-retryable ErrorCode): reported, never resent. */
  rejected: number;
  /** The latest rejections, newest last (at most 20). */
  recentRejections: Rejection[];
  pendingKeys: number;
  inFlightEntries: number;
  /** Age of the oldest notice not yet accepted by the bus: the forwarder's lag. */
  oldestPendingAgeMs: number;
  lastError?: string;
}

interface Pending {
  key: string;
  entry: PutEventsRequestEntry;
  firstSeenAt: number;
  attempt: number;
  notBefore: number;
  backoff?: IBackoff<unknown>;
  /** Bumped when a newer notice replaces this one, so a retry of the older one is not resent. */
  version: number;
}

/**
 * Coalesces change notices per key, sends them in PutEvents batches within EventBridge's limits, and
 * re-sends exactly the entries the bus reports as failed, with backoff, until they are accepted. Nothing
 * is dropped silently: an entry leaves when the bus accepted it, a newer notice for the same key replaced
 * it, or the bus refused it with a non-retryable error — counted in `rejected`, kept in
 * `recentRejections` and passed to `onRejected`, because resending could never succeed.
 */
export class EventSender {
  private readonly port: PutEventsPort;
  private readonly opts: Required<Omit<SenderOptions, 'now' | 'onRejected'>>;
  private readonly onRejected: (rejection: Rejection) => void;
  private readonly recentRejections: Rejection[] = [];
  private readonly now: () => number;
  private readonly pending = new Map<string, Pending>();
  private readonly inFlight = new Map<string, Pending>();
  private readonly waiters: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];
  private readonly backoffFactory: ExponentialBackoff<unknown>;
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = Infinity;
  private batchesInFlight = 0;
  private stopped = false;
  private readonly counters = {
    received: 0,
    coalesced: 0,
    sent: 0,
    batches: 0,
    failedEntryAttempts: 0,
    failedCalls: 0,
    rejected: 0,
  };
  private lastError: string | undefined;

  constructor(port: PutEventsPort, options: SenderOptions = {}) {
    this.port = port;
    this.now = options.now ?? Date.now;
    this.onRejected = options.onRejected ?? (() => undefined);
    this.opts = {
      coalesceWindowMs: options.coalesceWindowMs ?? DEFAULT_COALESCE_WINDOW_MS,
      maxPendingKeys: options.maxPendingKeys ?? 10_000,
      maxBatchesInFlight: options.maxBatchesInFlight ?? 4,
      initialRetryDelayMs: options.initialRetryDelayMs ?? 100,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
    };
    this.backoffFactory = new ExponentialBackoff({
      initialDelay: this.opts.initialRetryDelayMs,
      maxDelay: this.opts.maxRetryDelayMs,
    });
  }

  /**
   * Queues a notice. Resolves once it is held; waits (backpressure) while the sender holds maxPendingKeys
   * keys, so a watch loop that awaits this cannot grow memory without bound.
   */
  async enqueue(key: string, entry: PutEventsRequestEntry): Promise<void> {
    if (this.stopped) throw new Error('sender is stopped');
    const size = entrySize(entry);
    if (size > MAX_BYTES_PER_CALL)
      throw new Error(`notice for ${key} is ${size} bytes; EventBridge accepts at most ${MAX_BYTES_PER_CALL}`);
    this.counters.received += 1;
    const existing = this.pending.get(key);
    if (existing) {
      existing.entry = entry;
      existing.version += 1;
      this.counters.coalesced += 1;
      return;
    }
    while (this.pending.size + this.inFlight.size >= this.opts.maxPendingKeys) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
      if (this.stopped) throw new Error('sender is stopped');
    }
    const now = this.now();
    const superseded = this.inFlight.get(key);
    if (superseded) superseded.version += 1;
    this.pending.set(key, {
      key,
      entry,
      firstSeenAt: now,
      attempt: 0,
      notBefore: now + this.opts.coalesceWindowMs,
      version: 0,
    });
    this.schedule(this.opts.coalesceWindowMs);
  }

  stats(): SenderStats {
    let oldest = Infinity;
    for (const p of [...this.pending.values(), ...this.inFlight.values()]) oldest = Math.min(oldest, p.firstSeenAt);
    return {
      ...this.counters,
      pendingKeys: this.pending.size,
      inFlightEntries: this.inFlight.size,
      oldestPendingAgeMs: oldest === Infinity ? 0 : this.now() - oldest,
      recentRejections: [...this.recentRejections],
      lastError: this.lastError,
    };
  }

  /** Resolves when nothing is pending or in flight. */
  idle(): Promise<void> {
    if (this.pending.size === 0 && this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Sends everything held now (ignoring the coalesce window and retry delays once) and waits until the
   * bus accepted it or the deadline passed; returns how many keys were still unsent.
   */
  async flush(deadlineMs = 10_000): Promise<number> {
    for (const p of this.pending.values()) p.notBefore = 0;
    this.pump();
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref());
    await Promise.race([this.idle(), deadline]);
    return this.pending.size + this.inFlight.size;
  }

  /** Flushes, then refuses new notices. */
  async close(deadlineMs = 10_000): Promise<number> {
    const left = await this.flush(deadlineMs);
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.waiters.splice(0)) w();
    return left;
  }

  /** Arms the timer for delayMs from now unless it already fires sooner. */
  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const dueAt = this.now() + Math.max(0, delayMs);
    if (this.timer && this.timerDueAt <= dueAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDueAt = dueAt;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerDueAt = Infinity;
        this.pump();
      },
      Math.max(0, delayMs),
    );
  }

  private pump(): void {
    const now = this.now();
    const due = [...this.pending.values()].filter((p) => p.notBefore <= now && !this.inFlight.has(p.key));
    const batches = toBatches(due, (p) => entrySize(p.entry));
    while (this.batchesInFlight < this.opts.maxBatchesInFlight) {
      const batch = batches.shift();
      if (batch === undefined) break;
      for (const p of batch) {
        this.pending.delete(p.key);
        this.inFlight.set(p.key, p);
      }
      this.batchesInFlight += 1;
      void this.sendBatch(batch).finally(() => {
        this.batchesInFlight -= 1;
        this.afterProgress();
      });
    }
    this.rescheduleForNextDue();
  }

  private rescheduleForNextDue(): void {
    let next = Infinity;
    for (const p of this.pending.values()) if (!this.inFlight.has(p.key)) next = Math.min(next, p.notBefore);
    if (next !== Infinity) this.schedule(next - this.now());
  }

  private async sendBatch(batch: Pending[]): Promise<void> {
    const versions = batch.map((p) => p.version);
    let results: PutEventsResultEntry[] | undefined;
    try {
      results = await this.port.putEvents(batch.map((p) => p.entry));
      this.counters.batches += 1;
    } catch (err) {
      this.counters.failedCalls += 1;
      this.lastError = `${(err as Error).name}: ${(err as Error).message}`;
    }
    batch.forEach((p, i) => {
      this.inFlight.delete(p.key);
      const result = results?.[i];
      if (result && !result.ErrorCode && result.EventId) {
        this.counters.sent += 1;
        return;
      }
      if (result?.ErrorCode) {
        this.counters.failedEntryAttempts += 1;
        this.lastError = `${result.ErrorCode}: ${result.ErrorMessage ?? ''}`.trim();
        if (NON_RETRYABLE_ENTRY_ERRORS.has(result.ErrorCode)) {
          const rejection = { key: p.key, errorCode: result.ErrorCode, errorMessage: result.ErrorMessage ?? '' };
          this.counters.rejected += 1;
          this.recentRejections.push(rejection);
          if (this.recentRejections.length > KEPT_REJECTIONS) this.recentRejections.shift();
          this.onRejected(rejection);
          return;
        }
      }
      // A newer notice for this key is already queued: it carries everything this one did.
      if (this.pending.has(p.key) || p.version !== versions[i]) {
        this.counters.coalesced += 1;
        return;
      }
      p.backoff = p.backoff ? p.backoff.next(undefined) : this.backoffFactory.next();
      p.attempt += 1;
      p.notBefore = this.now() + p.backoff.duration;
      this.pending.set(p.key, p);
    });
  }

  private afterProgress(): void {
    while (this.pending.size + this.inFlight.size < this.opts.maxPendingKeys) {
      const waiter = this.waiters.shift();
      if (waiter === undefined) break;
      waiter();
    }
    if (this.pending.size === 0 && this.inFlight.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    else this.pump();
  }
}
