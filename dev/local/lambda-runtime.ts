import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { withInvocationSignal } from '../../adapters/invocation-signal.ts';

export type Handler<E = unknown, R = unknown> = (event: E, context: Context) => Promise<R>;

export interface LocalFunctionOptions {
  name: string;
  timeoutMs: number;
  /** Like Lambda reserved concurrency: invocations beyond it wait for a slot. */
  concurrency: number;
  memorySizeMb?: number;
}

export interface LocalFunctionStats {
  /** Execution environments created (at most one per concurrent invocation, then reused warm). */
  containers: number;
  invocations: number;
  /** Invocations that failed (a timeout included), not counting requeues. */
  errors: number;
  /**
   * Invocations that ended as a requeue (a RequeueError, core/outcome.ts: not finished, not failed). Lambda
   * counts them among its Errors; they are kept apart here so `errors` means something went wrong.
   */
  requeues: number;
  timeouts: number;
  running: number;
  queued: number;
  maxRunning: number;
  /**
   * Billed duration summed over invocations: each one's run time rounded up to the whole millisecond, as
   * Lambda bills it (with the memory size, the GB-seconds of the cost model).
   */
  billedMs: number;
  /** Time invocations spent waiting for a concurrency slot (a throttled event's wait in Lambda's queue). */
  queuedMs: number;
  /** Bytes of the START/END/REPORT lines Lambda writes to the function's log group for each invocation. */
  platformLogBytes: number;
}

/** The three lines the Lambda platform logs per invocation (text format), for counting log bytes. */
export function platformLogLines(requestId: string, durationMs: number, memoryMb: number): string {
  const billed = Math.ceil(durationMs);
  return (
    `START RequestId: ${requestId} Version: $LATEST\n` +
    `END RequestId: ${requestId}\n` +
    `REPORT RequestId: ${requestId}\tDuration: ${durationMs.toFixed(2)} ms\tBilled Duration: ${billed} ms\tMemory Size: ${memoryMb} MB\tMax Memory Used: ${Math.min(memoryMb, 128)} MB\t\n`
  );
}

/** One invocation's timeline (epoch ms, sub-millisecond): for latency breakdowns (dev/bench/latency.ts). */
export interface InvocationTiming {
  event: unknown;
  /** invoke() called: the event was handed over (by the bus, or a caller). */
  calledAt: number;
  /** A concurrency slot was free and the handler started. */
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

const epochMs = () => performance.timeOrigin + performance.now();

export class FunctionTimeoutError extends Error {
  constructor(name: string, timeoutMs: number) {
    super(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds (${name})`);
    this.name = 'FunctionTimeoutError';
  }
}

/**
 * Whether an invocation failed by running out of time: the runtime's own timeout, or the early one the
 * functions' middy raises before it (functions/common/observed-handler.ts).
 */
export function isTimeout(err: unknown): boolean {
  const name = (err as Error | null)?.name;
  return name === 'FunctionTimeoutError' || name === 'TimeoutError';
}

/**
 * Runs a Lambda handler in process with what the handler can observe of the real runtime: a context
 * (request id, remaining time), a timeout that fails the invocation, and a concurrency limit. A thread
 * cannot be killed the way Lambda ends an invocation, so the deadline is enforced where it matters: the
 * handler runs with the invocation's AbortSignal (adapters/invocation-signal.ts), which the state table and
 * the Kubernetes client obey, so a timed-out pass starts no write after its deadline and its requests in
 * flight are aborted. Code that does I/O without the adapters, or only computes, may still run on.
 */
export class LocalFunction<E = unknown, R = unknown> {
  readonly options: LocalFunctionOptions;
  private readonly newContainer: () => Handler<E, R>;
  /** Warm containers not running an invocation; like Lambda, one invocation per container at a time. */
  private readonly idle: Handler<E, R>[] = [];
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  readonly stats: LocalFunctionStats = {
    containers: 0,
    invocations: 0,
    errors: 0,
    requeues: 0,
    timeouts: 0,
    running: 0,
    queued: 0,
    maxRunning: 0,
    billedMs: 0,
    queuedMs: 0,
    platformLogBytes: 0,
  };

  /** One handler shared by every invocation (fine for handlers that keep no per-invocation state). */
  constructor(handler: Handler<E, R> | { newContainer: () => Handler<E, R> }, options: LocalFunctionOptions) {
    this.newContainer = typeof handler === 'function' ? () => handler : handler.newContainer;
    this.options = options;
  }

  /**
   * A function whose handler is built once per execution environment, as Lambda does: module-level state
   * (loggers with per-invocation keys, metrics dimensions, caches) is never shared by two concurrent
   * invocations.
   */
  static perContainer<E, R>(newHandler: () => Handler<E, R>, options: LocalFunctionOptions): LocalFunction<E, R> {
    return new LocalFunction<E, R>({ newContainer: newHandler }, options);
  }

  private readonly observers: ((t: InvocationTiming) => void)[] = [];

  /** Calls `observer` after each invocation with its timeline; returns a function that stops it. */
  observe(observer: (t: InvocationTiming) => void): () => void {
    this.observers.push(observer);
    return () => {
      const i = this.observers.indexOf(observer);
      if (i >= 0) this.observers.splice(i, 1);
    };
  }

  async invoke(event: E): Promise<R> {
    const calledAt = epochMs();
    if (this.running >= this.options.concurrency) {
      const queuedAt = performance.now();
      this.stats.queued += 1;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      this.stats.queued -= 1;
      this.stats.queuedMs += performance.now() - queuedAt;
    }
    this.running += 1;
    this.stats.running = this.running;
    this.stats.maxRunning = Math.max(this.stats.maxRunning, this.running);
    this.stats.invocations += 1;
    const deadline = Date.now() + this.options.timeoutMs;
    const context = this.context(deadline);
    let timer: NodeJS.Timeout | undefined;
    let container = this.idle.pop();
    if (!container) {
      container = this.newContainer();
      this.stats.containers += 1;
    }
    const handler = container;
    let timedOut = false;
    let ok = false;
    const startedAt = performance.now();
    const startedAtEpoch = epochMs();
    const deadlineReached = new AbortController();
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          const err = new FunctionTimeoutError(this.options.name, this.options.timeoutMs);
          deadlineReached.abort(err);
          reject(err);
        }, this.options.timeoutMs);
      });
      const result = await Promise.race([
        withInvocationSignal(deadlineReached.signal, () => handler(event, context)),
        timeout,
      ]);
      ok = true;
      return result;
    } catch (err) {
      if ((err as Error | null)?.name === 'RequeueError') this.stats.requeues += 1;
      else this.stats.errors += 1;
      if (isTimeout(err)) this.stats.timeouts += 1;
      throw err;
    } finally {
      clearTimeout(timer);
      const ran = timedOut ? this.options.timeoutMs : performance.now() - startedAt;
      this.stats.billedMs += Math.ceil(ran);
      this.stats.platformLogBytes += Buffer.byteLength(
        platformLogLines(context.awsRequestId, ran, this.options.memorySizeMb ?? 512),
      );
      // A container whose invocation the runtime had to abandon at the deadline is not reused (its handler
      // may still be computing); one whose handler ended by itself (middy's early timeout included) is, as
      // Lambda reuses an environment after a function error.
      if (!timedOut) this.idle.push(handler);
      this.running -= 1;
      this.stats.running = this.running;
      this.waiting.shift()?.();
      for (const o of this.observers) o({ event, calledAt, startedAt: startedAtEpoch, endedAt: epochMs(), ok });
    }
  }

  private context(deadline: number): Context {
    const name = this.options.name;
    return {
      callbackWaitsForEmptyEventLoop: false,
      functionName: name,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
      memoryLimitInMB: String(this.options.memorySizeMb ?? 512),
      awsRequestId: randomUUID(),
      logGroupName: `/aws/lambda/${name}`,
      logStreamName: `local/${name}`,
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      done: () => undefined,
      fail: () => undefined,
      succeed: () => undefined,
    };
  }
}
