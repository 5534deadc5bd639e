/**
 * Lambda entry point of `cloud-events`: EC2 instance state changes (stopping, shutting-down, stopped,
 * terminated) and Spot interruption warnings. Finds the Node whose spec.providerID names the instance — in
 * the cluster named on the event, else in every registered cluster — and when it hosts pool-spirit pods,
 * moves them to another Ready node of their pool and requests a reconcile of each pool (see
 * cloud-events/move.ts for why the function moves the pod itself).
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { ClusterAccessError } from '../../adapters/cluster-access/index.ts';
import { sanitizeErrorMessage } from '../../adapters/state-table/index.ts';
import { reconcileRequestDetailSchema, reconcileRequestRouting, toPutEventsEntry } from '../../events/index.ts';
import { mapLimited } from '../../shared/map-limited.ts';
import { type LambdaHandler, observedHandler, type WithoutDeadLetters } from '../common/observed-handler.ts';
import { sendEntries } from '../common/send-events.ts';
import type { TerminalResult } from '../common/terminal.ts';
import type { CloudEventsDeps, CloudEventsDepsInput } from './deps.ts';
import { cloudEventsDeps, cloudEventsDepsFromEnvironment } from './deps.ts';
import type { ClusterMatch } from './move.ts';
import { moveOffLeavingNode } from './move.ts';
import { parseCloudEvent } from './parse.ts';

export type { CloudEventsDeps, CloudEventsDepsInput } from './deps.ts';
export { cloudEventsDeps } from './deps.ts';
export type { ClusterMatch, PoolMove } from './move.ts';
export { LEAVING_ANNOTATION } from './move.ts';

export const CLOUD_EVENTS_REQUESTER = 'cloud-events';

export interface CloudEventResult {
  result: 'ignored' | 'no-node' | 'handled';
  instanceId?: string;
  why?: string;
  matches: ClusterMatch[];
  reconcileRequests: number;
}

async function handle(deps: CloudEventsDeps, event: unknown): Promise<CloudEventResult> {
  const leaving = parseCloudEvent(event);
  if (!leaving) return { result: 'ignored', matches: [], reconcileRequests: 0 };
  const { instanceId, why } = leaving;
  deps.logger.appendKeys({ instanceId, why });
  const candidates = leaving.clusterId
    ? [await deps.cluster(leaving.clusterId)].filter((c) => c !== undefined)
    : await deps.clusters();
  if (leaving.clusterId && candidates.length === 0)
    throw new ClusterAccessError(leaving.clusterId, undefined, 'not-registered');

  const matches: ClusterMatch[] = [];
  const failures: string[] = [];
  await mapLimited(candidates, deps.concurrency, async (cluster) => {
    try {
      const connection = await deps.clusterAccess.connectionFor(cluster);
      const match = await moveOffLeavingNode(
        deps.clusterClient(connection, cluster.id),
        cluster.id,
        leaving,
        deps.clock(),
        deps.namespace,
      );
      if (match) matches.push(match);
    } catch (err) {
      failures.push(cluster.id);
      deps.logger.warn('could not search a cluster for the instance', {
        clusterId: cluster.id,
        error: sanitizeErrorMessage(err, 300),
      });
    }
  });
  // The node may be in a cluster we could not read: fail so the bus retries (a repeat is harmless).
  if (matches.length === 0 && failures.length > 0) {
    throw new Error(
      `instance ${instanceId}: no matching Node found and ${failures.length} cluster(s) could not be searched (${failures.join(', ')})`,
    );
  }
  const entries = matches.flatMap((m) =>
    [...new Set(m.moves.map((move) => move.pool))].map((pool) =>
      toPutEventsEntry(
        reconcileRequestRouting,
        reconcileRequestDetailSchema,
        {
          clusterId: m.clusterId,
          nodePool: pool,
          reason: `cloud-event:${why}:${instanceId}:node/${m.node}`,
          requestedBy: CLOUD_EVENTS_REQUESTER,
        },
        { eventBusName: deps.eventBusName },
      ),
    ),
  );
  if (entries.length) await sendEntries(deps.events, entries);
  const moved = matches.flatMap((m) => m.moves);
  deps.metrics.addMetric(
    'CloudEventPoolSpiritsMoved',
    MetricUnit.Count,
    moved.filter((m) => m.action === 'rescheduled').length,
  );
  deps.metrics.addMetric('CloudEventReconcileRequests', MetricUnit.Count, entries.length);
  deps.logger.info('cloud event handled', {
    matches: matches.map((m) => ({ clusterId: m.clusterId, node: m.node, moves: m.moves })),
  });
  return {
    result: matches.length ? 'handled' : 'no-node',
    instanceId,
    why,
    matches,
    reconcileRequests: entries.length,
  };
}

/** Without a dead-letter sink (the CLI, tests) input that can never succeed is thrown, not returned. */
export function createCloudEventsHandler(
  input: WithoutDeadLetters<CloudEventsDepsInput>,
): LambdaHandler<CloudEventResult>;
export function createCloudEventsHandler(
  input: CloudEventsDepsInput | (() => CloudEventsDeps),
): LambdaHandler<CloudEventResult | TerminalResult>;
export function createCloudEventsHandler(
  input: CloudEventsDepsInput | (() => CloudEventsDeps),
): LambdaHandler<CloudEventResult | TerminalResult> {
  let resolved: CloudEventsDeps | undefined;
  const deps = () => (resolved ??= typeof input === 'function' ? input() : cloudEventsDeps(input));
  return observedHandler('cloudEvents', deps, (d, event) => handle(d, event));
}

export const handler = createCloudEventsHandler(() => cloudEventsDepsFromEnvironment());
