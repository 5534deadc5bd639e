/**
 * Lambda entry point of `reconcile`: converges one (cluster, NodePool) key named by an EventBridge event
 * (a change notice or a reconcile request). Thin on purpose: parsing is in reconcile/trigger.ts, the lease
 * and outcome in reconcile/run.ts, the cluster work in reconcile/converge.ts, wiring in reconcile/deps.ts.
 */

import { randomUUID } from 'node:crypto';
import { type LambdaHandler, observedHandler, type WithoutDeadLetters } from '../common/observed-handler.ts';
import type { TerminalResult } from '../common/terminal.ts';
import type { ReconcileDeps, ReconcileDepsInput } from './deps.ts';
import { depsFromEnvironment, reconcileDeps } from './deps.ts';
import type { ReconcileResult } from './run.ts';
import { reconcile } from './run.ts';
import { parseTrigger } from './trigger.ts';

export type { ReconcileDeps, ReconcileDepsInput } from './deps.ts';
export { reconcileDeps } from './deps.ts';
export type { ReconcileResult } from './run.ts';

/** The handler, bound to the given dependencies (the local stack and tests call this). */
/** Without a dead-letter sink (the CLI, tests) input that can never succeed is thrown, not returned. */
export function createReconcileHandler(
  input: WithoutDeadLetters<ReconcileDeps | ReconcileDepsInput>,
): LambdaHandler<ReconcileResult>;
export function createReconcileHandler(
  input: ReconcileDeps | ReconcileDepsInput | (() => ReconcileDeps),
): LambdaHandler<ReconcileResult | TerminalResult>;
export function createReconcileHandler(
  input: ReconcileDeps | ReconcileDepsInput | (() => ReconcileDeps),
): LambdaHandler<ReconcileResult | TerminalResult> {
  let resolved: ReconcileDeps | undefined;
  const deps = () => (resolved ??= typeof input === 'function' ? input() : reconcileDeps(input));
  return observedHandler('reconcile', deps, async (d, event, context): Promise<ReconcileResult> => {
    const target = parseTrigger(event);
    d.logger.appendKeys({ clusterId: target.clusterId, nodePool: target.nodePool, eventId: target.eventId });
    // Metadata, not a dimension: each clusterId value would be a custom metric series of its own ($0.30 a
    // month each, 4 per function per cluster: most of the fleet's bill, docs/cost.md); in the EMF document
    // it still lets CloudWatch Logs Insights break a metric down by cluster.
    d.metrics.addMetadata('clusterId', target.clusterId);
    // The lease owner must be unique per invocation; a local caller may pass no request id.
    const id = context?.awsRequestId || randomUUID();
    // The lease is cut at the deadline (run.ts, leaseTtlAt); a direct caller's context has none.
    const remaining = context?.getRemainingTimeInMillis?.();
    const deadline = remaining === undefined ? undefined : d.clock().getTime() + remaining;
    return reconcile(d, target, { id, deadline });
  });
}

/** The cloud handler: dependencies from the function's environment, built on the first invocation. */
export const handler = createReconcileHandler(() => depsFromEnvironment());
