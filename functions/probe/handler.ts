/**
 * Lambda entry point of `probe`: leader-election observations of every pool of a cluster, stored in the state
 * table and classified healthy, no-leader, stale or flapping. Two triggers, told apart by detail-type:
 *  - the schedule (`Scheduled Event` from aws.events): fan out one Leader Probe Request per registered cluster;
 *  - a Leader Probe Request (or a direct `{ "clusterId": … }`): probe that cluster.
 * Thin on purpose: parsing in probe/trigger.ts, the fan-out in probe/fan-out.ts, the probe in probe/run.ts.
 */

import { type LambdaHandler, observedHandler, type WithoutDeadLetters } from '../common/observed-handler.ts';
import type { TerminalResult } from '../common/terminal.ts';
import { unknownCluster } from '../common/terminal.ts';
import type { ProbeDeps, ProbeDepsInput } from './deps.ts';
import { probeDeps, probeDepsFromEnvironment } from './deps.ts';
import type { ProbeFanOutResult } from './fan-out.ts';
import { fanOutProbe } from './fan-out.ts';
import type { ProbeResult } from './run.ts';
import { runProbe } from './run.ts';
import { parseProbeTrigger } from './trigger.ts';

export type { ProbeDeps, ProbeDepsInput } from './deps.ts';
export { PROBE_LEADER_THRESHOLDS, probeDeps } from './deps.ts';
export type { ProbeFanOutResult } from './fan-out.ts';
export type { ClusterProbeResult, PoolProbeResult, ProbeResult } from './run.ts';
export { parseProbeTrigger } from './trigger.ts';

/** What one invocation did: fanned a tick out, or probed one cluster. */
export type ProbeInvocationResult = ({ kind: 'fan-out' } & ProbeFanOutResult) | ({ kind: 'cluster' } & ProbeResult);

/** The handler, bound to the given dependencies (the local stack and tests call this). */
/** Without a dead-letter sink (the CLI, tests) input that can never succeed is thrown, not returned. */
export function createProbeHandler(
  input: WithoutDeadLetters<ProbeDeps | ProbeDepsInput>,
): LambdaHandler<ProbeInvocationResult>;
export function createProbeHandler(
  input: ProbeDeps | ProbeDepsInput | (() => ProbeDeps),
): LambdaHandler<ProbeInvocationResult | TerminalResult>;
export function createProbeHandler(
  input: ProbeDeps | ProbeDepsInput | (() => ProbeDeps),
): LambdaHandler<ProbeInvocationResult | TerminalResult> {
  let resolved: ProbeDeps | undefined;
  const deps = () => (resolved ??= typeof input === 'function' ? input() : probeDeps(input));
  return observedHandler('probe', deps, async (d, event): Promise<ProbeInvocationResult> => {
    const trigger = parseProbeTrigger(event);
    if (trigger.scope === 'all') {
      return { kind: 'fan-out', ...(await fanOutProbe(d, { runId: trigger.runId, requestedBy: 'schedule' })) };
    }
    const { clusterId, runId, requestedBy } = trigger;
    d.logger.appendKeys({ clusterId, ...(runId ? { runId } : {}), ...(requestedBy ? { requestedBy } : {}) });
    // An unregistered cluster stays so for this request: terminal, not a failed probe to retry.
    if (!(await d.cluster(clusterId))) throw unknownCluster(clusterId, trigger.field);
    return { kind: 'cluster', ...(await runProbe(d, clusterId)) };
  });
}

/** The cloud handler: dependencies from the function's environment, built on the first invocation. */
export const handler = createProbeHandler(() => probeDepsFromEnvironment());
