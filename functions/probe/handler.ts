/**
 * Lambda entry point of `probe`: leader-election observations of every pool of one cluster (a probe
 * request) or of the whole fleet (the schedule), stored in the state table and classified healthy,
 * no-leader, stale or flapping. Thin on purpose: parsing in probe/trigger.ts, the work in probe/run.ts.
 */

import { type LambdaHandler, observedHandler, type WithoutDeadLetters } from '../common/observed-handler.ts';
import type { TerminalResult } from '../common/terminal.ts';
import { unknownCluster } from '../common/terminal.ts';
import type { ProbeDeps, ProbeDepsInput } from './deps.ts';
import { probeDeps, probeDepsFromEnvironment } from './deps.ts';
import type { ProbeResult } from './run.ts';
import { runProbe } from './run.ts';
import { parseProbeTrigger } from './trigger.ts';

export type { ProbeDeps, ProbeDepsInput } from './deps.ts';
export { PROBE_LEADER_THRESHOLDS, probeDeps } from './deps.ts';
export type { ClusterProbeResult, PoolProbeResult, ProbeResult } from './run.ts';
export { LEADER_PROBE_REQUEST_DETAIL_TYPE, parseProbeTrigger } from './trigger.ts';

/** The handler, bound to the given dependencies (the local stack and tests call this). */
/** Without a dead-letter sink (the CLI, tests) input that can never succeed is thrown, not returned. */
export function createProbeHandler(input: WithoutDeadLetters<ProbeDeps | ProbeDepsInput>): LambdaHandler<ProbeResult>;
export function createProbeHandler(
  input: ProbeDeps | ProbeDepsInput | (() => ProbeDeps),
): LambdaHandler<ProbeResult | TerminalResult>;
export function createProbeHandler(
  input: ProbeDeps | ProbeDepsInput | (() => ProbeDeps),
): LambdaHandler<ProbeResult | TerminalResult> {
  let resolved: ProbeDeps | undefined;
  const deps = () => (resolved ??= typeof input === 'function' ? input() : probeDeps(input));
  return observedHandler('probe', deps, async (d, event) => {
    const target = parseProbeTrigger(event);
    if (target.scope === 'cluster') {
      d.logger.appendKeys({ clusterId: target.clusterId });
      // An unregistered cluster stays so for this request: terminal, not a failed probe to retry.
      if (!(await d.cluster(target.clusterId))) {
        throw unknownCluster(
          target.clusterId,
          typeof event === 'object' && event !== null && 'detail' in event ? 'detail.clusterId' : 'clusterId',
        );
      }
    }
    return runProbe(d, target);
  });
}

/** The cloud handler: dependencies from the function's environment, built on the first invocation. */
export const handler = createProbeHandler(() => probeDepsFromEnvironment());
