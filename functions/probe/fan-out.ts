/**
 * The scheduled half of the probe: one Leader Probe Request per registered cluster, so each cluster is probed
 * in its own invocation (within its own timeout) and the fleet's size bounds only how long a pass takes
 * through the function's reserved concurrency, not one invocation's work.
 */
import type { LeaderProbeRequest } from '../../events/index.ts';
import { leaderProbeRequestDetailSchema, leaderProbeRequestRouting, toPutEventsEntry } from '../../events/index.ts';
import { sendEntries } from '../common/send-events.ts';
import type { ProbeDeps } from './deps.ts';

export interface ProbeFanOutResult {
  runId: string;
  /** The clusters asked, sorted. */
  clusters: string[];
  putEventsCalls: number;
}

/**
 * `runId`: the scheduled event's id, so the invocations of one tick share it in their logs. Nothing is stored
 * for the run: a repeated delivery of the tick asks again, and a second probe of a cluster is one more
 * observation, classified like any other.
 */
export async function fanOutProbe(
  deps: ProbeDeps,
  options: { runId: string; requestedBy: string },
): Promise<ProbeFanOutResult> {
  if (!deps.events) throw new Error('the probe fan-out needs an event sender (EVENT_BUS_NAME)');
  const { runId, requestedBy } = options;
  const clusters = (await deps.clusters()).map((c) => c.id).sort();
  const entries = clusters.map((clusterId) =>
    toPutEventsEntry(
      leaderProbeRequestRouting,
      leaderProbeRequestDetailSchema,
      { clusterId, runId, requestedBy } satisfies LeaderProbeRequest,
      { eventBusName: deps.eventBusName },
    ),
  );
  const sent = await sendEntries(deps.events, entries);
  deps.logger.info('probe fanned out', { runId, clusters: clusters.length, putEventsCalls: sent.calls });
  return { runId, clusters, putEventsCalls: sent.calls };
}
