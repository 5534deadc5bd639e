import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/**
 * Logger and metrics for a function running in the local stack. There is no CloudWatch to read EMF
 * metrics and JSON logs would drown the progress view, so metrics are off and logs show errors only —
 * unless POWERTOOLS_LOG_LEVEL / PS_LOCAL_METRICS=true ask for more. The process environment is left as
 * it was: other code in the same process (tests) must see its own settings.
 */
export function localObservability(serviceName: string): { logger: Logger; metrics: Metrics } {
  const logger = new Logger({
    serviceName,
    logLevel: (process.env.POWERTOOLS_LOG_LEVEL as 'ERROR' | undefined) ?? 'ERROR',
  });
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;
  // Powertools reads the switch from the environment only, once, when the instance is built.
  process.env.POWERTOOLS_METRICS_DISABLED = process.env.PS_LOCAL_METRICS === 'true' ? 'false' : 'true';
  try {
    // Its warnings (e.g. an invocation with no metrics) go through the function's logger and its level.
    return { logger, metrics: new Metrics({ namespace: 'PoolSpirit', serviceName, logger }) };
  } finally {
    if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  }
}
