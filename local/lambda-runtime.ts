import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

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
}

export class FunctionTimeoutError extends Error {
  constructor(name: string, timeoutMs: number) {
    super(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds (${name})`);
    this.name = 'FunctionTimeoutError';
  }
}

/**
 * Runs a Lambda handler in process with what the handler can observe of the real runtime: a context
 * (request id, remaining time), a timeout that fails the invocation, and a concurrency limit. A timed-out
 * invocation keeps running in the background (as a frozen Lambda sandbox would be thawed later), which is
 * exactly why handlers must be idempotent and fenced.
 */
export class LocalFunction<E = unknown, R = unknown> {
  readonly options: LocalFunctionOptions;
  private readonly newContainer: () => Handler<E, R>;
  /** Warm containers not running an invocation; like Lambda, one invocation per container at a time. */
  private readonly idle: Handler<E, R>[] = [];
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  readonly stats: LocalFunctionStats = { containers: 0, invocations: 0, errors: 0, requeues: 0, timeouts: 0, running: 0, queued: 0, maxRunning: 0 };

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

  async invoke(event: E): Promise<R> {
    if (this.running >= this.options.concurrency) {
      this.stats.queued += 1;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      this.stats.queued -= 1;
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
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          this.stats.timeouts += 1;
          timedOut = true;
          reject(new FunctionTimeoutError(this.options.name, this.options.timeoutMs));
        }, this.options.timeoutMs);
      });
      return await Promise.race([handler(event, context), timeout]);
    } catch (err) {
      if ((err as Error | null)?.name === 'RequeueError') this.stats.requeues += 1;
      else this.stats.errors += 1;
      throw err;
    } finally {
      clearTimeout(timer);
      // A timed-out invocation may still be running inside its container: that container is not reused.
      if (!timedOut) this.idle.push(handler);
      this.running -= 1;
      this.stats.running = this.running;
      this.waiting.shift()?.();
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
