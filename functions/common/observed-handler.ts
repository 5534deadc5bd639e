import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { withInvocationSignal } from '../../adapters/invocation-signal.ts';
import type { DeadLetterSink } from './dead-letters.ts';
import type { FunctionName } from './permissions.ts';
import type { TerminalReason, TerminalResult } from './terminal.ts';
import { terminalReasonOf } from './terminal.ts';

export type LambdaHandler<R> = (event: unknown, context?: Context) => Promise<R>;

/** Dependencies without a dead-letter sink: a terminal error is thrown to the caller, never returned. */
export type WithoutDeadLetters<I> = I & { deadLetters?: undefined };

export interface ObservedDeps {
  logger: Logger;
  metrics: Metrics;
  /**
   * Where input that can never succeed is recorded. Set (the cloud, the local stack): the handler records
   * the dead letter and returns a TerminalResult, so nothing retries it. Unset (the CLI, a direct caller):
   * the error is thrown to the caller, who is not retried by anyone.
   */
  deadLetters?: DeadLetterSink;
}

/**
 * How long before the platform's timeout a pass is stopped: time to abort what is in flight and report the
 * timeout as the function's own error (logged, metrics flushed) before Lambda would end the environment.
 */
export const DEADLINE_MARGIN_MS = 1_000;

/**
 * A function's Lambda handler: `core` behind Powertools' context injection (per-invocation log keys reset)
 * and metrics flushing, with the outcome contract of core/outcome.ts applied to what it throws. Built on the
 * first invocation, so importing a function module never reads the environment, and tests or the local
 * stack can hand in their own dependencies.
 */
export function observedHandler<D extends ObservedDeps, R>(
  functionName: FunctionName,
  deps: () => D,
  core: (deps: D, event: unknown, context: Context) => Promise<R>,
  /** The function's own never-succeeding errors, besides the shared ones (functions/common/terminal.ts). */
  terminalOf: (err: unknown, event: unknown) => TerminalReason | undefined = () => undefined,
): LambdaHandler<R | TerminalResult> {
  let wrapped: ((event: unknown, context: Context) => Promise<R | TerminalResult>) | undefined;
  return (event, context) => {
    if (!wrapped) {
      const d = deps();
      // middy ends an invocation this long before the platform's timeout (its TimeoutError) and aborts the
      // signal it hands the handler; the adapters' I/O obeys that signal (adapters/invocation-signal.ts), so
      // a pass that overran stops writing instead of resuming when its frozen environment is thawed.
      wrapped = middy(
        (e: unknown, c: Context, { signal }: { signal: AbortSignal }) =>
          withInvocationSignal(signal, () => withOutcomes(functionName, d, e, c, core, terminalOf)),
        { timeoutEarlyInMillis: DEADLINE_MARGIN_MS },
      )
        .use(injectLambdaContext(d.logger, { resetKeys: true }))
        .use(logMetrics(d.metrics));
    }
    // A direct caller (spiritctl, a test) may pass no context.
    return wrapped(event, context ?? ({} as Context));
  };
}

async function withOutcomes<D extends ObservedDeps, R>(
  functionName: FunctionName,
  d: D,
  event: unknown,
  context: Context,
  core: (deps: D, event: unknown, context: Context) => Promise<R>,
  terminalOf: (err: unknown, event: unknown) => TerminalReason | undefined,
): Promise<R | TerminalResult> {
  try {
    return await core(d, event, context);
  } catch (err) {
    const terminal = terminalReasonOf(err) ?? terminalOf(err, event);
    if (!terminal) throw err;
    // The one line this input gets: retrying would only repeat it.
    d.logger.error('input can never succeed; recorded as a dead letter, not retried', {
      terminal,
      deadLettered: d.deadLetters !== undefined,
    });
    d.metrics.addMetric('TerminalEvents', MetricUnit.Count, 1);
    if (!d.deadLetters) throw err;
    // If the queue cannot be reached this throws: the invocation fails and takes the retry path, whose
    // end is the same queue (Lambda's on-failure destination), so the event is not lost.
    await d.deadLetters.send({
      functionName,
      reason: terminal,
      event,
      attempts: 1,
      requestId: context.awsRequestId || undefined,
    });
    return { result: 'terminal', terminal };
  }
}
