import { SCHEDULED_EVENT_DETAIL_TYPE, SCHEDULED_EVENT_SOURCE } from '../../../events/source.ts';
import type { Clock } from './clock.ts';
import type { CompiledPattern } from './pattern.ts';
import { eventTime } from './put-events.ts';
import { sanitizeError } from './sanitize.ts';
import type { Schedule } from './schedule.ts';
import type { BusActivity, BusEvent, DeadLetter, DeadLetterReason, TargetFn } from './types.ts';

/** A rule after validation, with EventBridge's defaults filled in. */
export interface ResolvedRule {
  name: string;
  eventBus: string;
  target: string;
  compiled: CompiledPattern | null;
  schedule: Schedule | null;
  input: unknown;
  inputPath: string | null;
  maximumRetryAttempts: number;
  maximumEventAgeMs: number;
  deadLetterQueueArn: string | null;
  enabled: boolean;
}

export interface DispatcherOptions {
  clock: Clock;
  targets: Record<string, TargetFn>;
  random: () => number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxConcurrency: number;
  attemptTimeoutMs: number | null;
  /** Probability (0-1) that a delivery is made twice. */
  duplicateProbability: number;
  /** Hold routed events this long and release them shuffled; null for no reordering. */
  reorderWindowMs: number | null;
  onActivity: (activity: BusActivity) => void;
  onDeadLetter: (deadLetter: DeadLetter) => void;
}

interface Job {
  rule: ResolvedRule;
  event: BusEvent;
  acceptedAt: number;
  attempts: number;
  firstAttemptAt: number | null;
}

/**
 * At-least-once delivery of routed events to rule targets: each (event, rule) pair is retried with
 * exponential backoff and jitter until the target succeeds, the retry budget is spent or the event is
 * too old; then it goes to the dead-letter store with the last error.
 */
export class Dispatcher {
  readonly counters = { attempts: 0, retries: 0, delivered: 0, deadLettered: 0, duplicatesInjected: 0 };
  #opts: DispatcherOptions;
  #queue: Job[] = [];
  #inFlight = 0;
  #retryTimers = new Map<unknown, Job>();
  #reorderBuffer: Job[] = [];
  #reorderTimer: unknown = null;
  #idleWaiters: (() => void)[] = [];
  #stopped = false;

  constructor(opts: DispatcherOptions) {
    this.#opts = opts;
  }

  get queued(): number {
    return this.#queue.length + this.#reorderBuffer.length;
  }
  get inFlight(): number {
    return this.#inFlight;
  }
  get waitingRetry(): number {
    return this.#retryTimers.size;
  }

  /** Hands one accepted event to every rule it matched. */
  dispatch(event: BusEvent, rules: ResolvedRule[]): void {
    if (this.#stopped) return;
    const now = this.#opts.clock.now();
    const jobs: Job[] = [];
    for (const rule of rules) {
      jobs.push({ rule, event, acceptedAt: now, attempts: 0, firstAttemptAt: null });
      if (this.#opts.duplicateProbability > 0 && this.#opts.random() < this.#opts.duplicateProbability) {
        this.counters.duplicatesInjected++;
        jobs.push({ rule, event, acceptedAt: now, attempts: 0, firstAttemptAt: null });
      }
    }
    if (this.#opts.reorderWindowMs === null) {
      this.#queue.push(...jobs);
      this.#pump();
      return;
    }
    this.#reorderBuffer.push(...jobs);
    if (this.#reorderTimer === null) {
      this.#reorderTimer = this.#opts.clock.setTimeout(() => this.#releaseReordered(), this.#opts.reorderWindowMs);
    }
  }

  /** Resolves once nothing is queued, running, waiting for a retry or held for reordering. */
  drain(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops delivering: drops what is queued, held or waiting for a retry; returns how many were dropped. */
  stop(): number {
    const dropped = this.#queue.length + this.#retryTimers.size + this.#reorderBuffer.length;
    this.#stopped = true;
    for (const handle of this.#retryTimers.keys()) this.#opts.clock.clearTimeout(handle);
    this.#retryTimers.clear();
    if (this.#reorderTimer !== null) this.#opts.clock.clearTimeout(this.#reorderTimer);
    this.#reorderTimer = null;
    this.#reorderBuffer = [];
    this.#queue = [];
    this.#checkIdle();
    return dropped;
  }

  #releaseReordered(): void {
    this.#reorderTimer = null;
    const jobs = this.#reorderBuffer;
    this.#reorderBuffer = [];
    const shuffled = shuffle(jobs, this.#opts.random);
    // A shuffle may land on the original order; reverse then, so every window really is reordered.
    if (shuffled.length > 1 && shuffled.every((j, i) => j === jobs[i])) shuffled.reverse();
    this.#queue.push(...shuffled);
    this.#pump();
  }

  #idle(): boolean {
    return (
      this.#queue.length === 0 &&
      this.#inFlight === 0 &&
      this.#retryTimers.size === 0 &&
      this.#reorderBuffer.length === 0
    );
  }

  #checkIdle(): void {
    if (!this.#idle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #pump(): void {
    while (!this.#stopped && this.#inFlight < this.#opts.maxConcurrency && this.#queue.length > 0) {
      const job = this.#queue.shift()!;
      this.#inFlight++;
      void this.#attempt(job).finally(() => {
        this.#inFlight--;
        this.#pump();
        this.#checkIdle();
      });
    }
  }

  async #attempt(job: Job): Promise<void> {
    const { clock } = this.#opts;
    job.attempts++;
    job.firstAttemptAt ??= clock.now();
    this.counters.attempts++;
    if (job.attempts > 1) this.counters.retries++;
    try {
      await this.#invoke(job);
      this.counters.delivered++;
      this.#opts.onActivity({ type: 'delivered', event: job.event, rule: job.rule.name, attempts: job.attempts });
    } catch (err) {
      this.#failed(job, sanitizeError(err), requeueAfterMs(err));
    }
  }

  async #invoke(job: Job): Promise<void> {
    const target = this.#opts.targets[job.rule.target];
    if (!target) throw new Error(`target function ${job.rule.target} is not registered`);
    const payload = payloadFor(job.rule, job.event);
    const call = Promise.resolve().then(() => target(payload));
    const timeoutMs = this.#opts.attemptTimeoutMs;
    if (timeoutMs === null) {
      await call;
      return;
    }
    let handle: unknown;
    const timeout = new Promise<never>((_, reject) => {
      handle = this.#opts.clock.setTimeout(
        () => reject(new Error(`target ${job.rule.target} timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([call, timeout]);
    } finally {
      this.#opts.clock.clearTimeout(handle);
    }
  }

  /**
   * `requeueAfterMs`: the target said when to come back (a RequeueError, core/outcome.ts, e.g. a pool whose
   * lease another invocation holds until then). The retry waits at least that long; it still counts as an
   * attempt, as a function error does for Lambda's async retries in the cloud.
   */
  #failed(job: Job, error: string, requeueAfterMs?: number): void {
    const { clock, onActivity } = this.#opts;
    const reportFailed = (retryInMs: number | null) =>
      onActivity({
        type: 'attempt-failed',
        event: job.event,
        rule: job.rule.name,
        attempt: job.attempts,
        error,
        retryInMs,
      });
    const retriesMade = job.attempts - 1;
    if (retriesMade >= job.rule.maximumRetryAttempts) {
      reportFailed(null);
      this.#deadLetter(job, 'retries-exhausted', error);
      return;
    }
    const delay = Math.max(this.#backoff(job.attempts), requeueAfterMs ?? 0);
    if (clock.now() + delay - job.acceptedAt > job.rule.maximumEventAgeMs) {
      reportFailed(null);
      this.#deadLetter(job, 'maximum-event-age-exceeded', error);
      return;
    }
    reportFailed(delay);
    if (this.#stopped) return;
    const handle = clock.setTimeout(() => {
      this.#retryTimers.delete(handle);
      this.#queue.push(job);
      this.#pump();
      this.#checkIdle();
    }, delay);
    this.#retryTimers.set(handle, job);
  }

  /** Exponential backoff with equal jitter: half the step is fixed, half random, capped at maxDelayMs. */
  #backoff(attempt: number): number {
    const step = Math.min(this.#opts.maxDelayMs, this.#opts.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(step / 2 + this.#opts.random() * (step / 2));
  }

  /** A dead letter a target recorded itself (it gave up at once): counted and kept like the bus's own. */
  recordDeadLetter(deadLetter: DeadLetter): void {
    this.counters.deadLettered++;
    this.#opts.onDeadLetter(deadLetter);
    this.#opts.onActivity({ type: 'dead-letter', deadLetter });
  }

  #deadLetter(job: Job, reason: DeadLetterReason, error: string): void {
    this.counters.deadLettered++;
    const now = this.#opts.clock.now();
    const deadLetter: DeadLetter = {
      eventId: job.event.id,
      rule: job.rule.name,
      eventBus: job.rule.eventBus,
      target: job.rule.target,
      deadLetterQueueArn: job.rule.deadLetterQueueArn,
      reason,
      error,
      attempts: job.attempts,
      firstAttemptAt: new Date(job.firstAttemptAt ?? now).toISOString(),
      failedAt: new Date(now).toISOString(),
      event: job.event,
    };
    this.#opts.onDeadLetter(deadLetter);
    this.#opts.onActivity({ type: 'dead-letter', deadLetter });
  }
}

/** The wait a RequeueError asks for (its `afterMs`), recognised by shape: the bus does not import the core. */
function requeueAfterMs(err: unknown): number | undefined {
  if (!(err instanceof Error) || err.name !== 'RequeueError') return undefined;
  const afterMs = (err as { afterMs?: unknown }).afterMs;
  return typeof afterMs === 'number' && Number.isFinite(afterMs) && afterMs > 0 ? afterMs : undefined;
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** What the target receives: the rule's constant input, the part at inputPath, or a copy of the event. */
export function payloadFor(rule: Pick<ResolvedRule, 'input' | 'inputPath'>, event: BusEvent): unknown {
  if (rule.input !== undefined) return structuredClone(rule.input);
  const copy = structuredClone(event);
  if (!rule.inputPath) return copy;
  let value: unknown = copy;
  for (const key of rule.inputPath
    .replace(/^\$\.?/, '')
    .split('.')
    .filter(Boolean)) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/** The event EventBridge sends when a schedule rule fires. */
export function scheduledEvent(
  rule: ResolvedRule,
  id: string,
  firedAt: number,
  account: string,
  region: string,
): BusEvent {
  return {
    version: '0',
    id,
    'detail-type': SCHEDULED_EVENT_DETAIL_TYPE,
    source: SCHEDULED_EVENT_SOURCE,
    account,
    time: eventTime(firedAt),
    region,
    resources: [`arn:aws:events:${region}:${account}:rule/${rule.name}`],
    detail: {},
  };
}
