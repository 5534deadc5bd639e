import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';

export type LambdaHandler<R> = (event: unknown, context?: Context) => Promise<R>;

/**
 * A function's Lambda handler: `core` behind Powertools' context injection (per-invocation log keys reset)
 * and metrics flushing. Built on the first invocation, so importing a function module never reads the
 * environment, and tests or the local stack can hand in their own dependencies.
 */
export function observedHandler<D extends { logger: Logger; metrics: Metrics }, R>(
  deps: () => D,
  core: (deps: D, event: unknown, context: Context) => Promise<R>,
): LambdaHandler<R> {
  let wrapped: LambdaHandler<R> | undefined;
  return (event, context) => {
    if (!wrapped) {
      const d = deps();
      wrapped = middy((e: unknown, c: Context) => core(d, e, c))
        .use(injectLambdaContext(d.logger, { resetKeys: true }))
        .use(logMetrics(d.metrics)) as unknown as LambdaHandler<R>;
    }
    // A direct caller (spiritctl, a test) may pass no context.
    return wrapped(event, context ?? ({} as Context));
  };
}
