/**
 * One probe of one cluster: read every PoolSpirit's `status.leader` (what the agent reported from the
 * pool-spirit's kube-system/yurthub Lease), classify each pool against the window of changes its latest
 * record carries, and write the pool only when the observation says something new (core/leader/
 * probe-record.ts). The function never reaches into a pool-spirit: it only reads the cluster's apiserver.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  latestLeaderProbes,
  recordLeaderProbe,
  recordProbeRun,
  sanitizeErrorMessage,
} from '../../adapters/state-table/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import type { LeaderClassification, LeaderObservation, LeaderState } from '../../core/leader/index.ts';
import { classifyLeader, LEADER_STATES, probeWriteReason, recentObservations } from '../../core/leader/index.ts';
import { API_VERSION, KIND } from '../../core/poolspirit/names.ts';
import type { ProbeDeps } from './deps.ts';

export interface PoolProbeResult extends LeaderClassification {
  nodePool: string;
  poolSpirit: string;
}

export interface ClusterProbeResult {
  clusterId: string;
  pools: PoolProbeResult[];
}

export interface ProbeResult {
  clusters: ClusterProbeResult[];
  /** Pools per state across the clusters probed. */
  counts: Record<LeaderState, number>;
}

/**
 * Probes one cluster (the schedule fans out one request per cluster: functions/probe/fan-out.ts). A probe that
 * could not be done throws, so the bus retries it.
 */
export async function runProbe(deps: ProbeDeps, clusterId: string): Promise<ProbeResult> {
  const cluster = await probeCluster(deps, clusterId).catch((err: unknown) => {
    const error = sanitizeErrorMessage(err, 500);
    deps.logger.error('cluster probe failed', { clusterId, error });
    deps.metrics.addMetric('ProbeErrors', MetricUnit.Count, 1);
    throw new Error(`probe of cluster ${clusterId} failed: ${error}`);
  });
  const counts = countStates(cluster.pools);
  for (const s of LEADER_STATES) deps.metrics.addMetric(`LeaderPools_${s}`, MetricUnit.Count, counts[s]);
  return { clusters: [cluster], counts };
}

export async function probeCluster(deps: ProbeDeps, clusterId: string): Promise<ClusterProbeResult> {
  const registration = await deps.cluster(clusterId);
  if (!registration) throw new Error(`cluster ${clusterId} is not registered`);
  const connection = await deps.clusterAccess.connectionFor(registration);
  const client = deps.clusterClient(connection, clusterId);
  // One read of the cluster's pools and one of their records, whatever the number of pools.
  const [spirits, recorded] = await Promise.all([
    client.listByLabel(API_VERSION, KIND, undefined, {}),
    latestLeaderProbes(deps.table, clusterId, deps.clock()),
  ]);
  const recordOf = new Map(recorded.map((r) => [r.nodePool, r]));
  const pools: PoolProbeResult[] = [];
  let written = 0;
  for (const spirit of spirits) {
    const now = deps.clock();
    const nodePool = poolOf(spirit);
    const observation = observe(spirit, now);
    const previous = recordOf.get(nodePool);
    const classification = classifyLeader([...(previous?.recent ?? []), observation], now, deps.thresholds);
    if (probeWriteReason(previous, observation, classification, now, deps.heartbeatMs)) {
      const recent = recentObservations(previous?.recent ?? [], observation, now);
      await recordLeaderProbe(
        deps.table,
        { clusterId, nodePool, observation, classification, recent },
        now,
        deps.retentionMs,
      );
      written++;
    }
    pools.push({ nodePool, poolSpirit: spirit.metadata.name, ...classification });
    if (classification.state !== 'healthy') {
      deps.logger.warn('leader election unhealthy', {
        clusterId,
        nodePool,
        state: classification.state,
        reason: classification.reason,
      });
    }
  }
  const now = deps.clock();
  const counts = countStates(pools);
  await recordProbeRun(deps.table, { clusterId, probedAt: now.toISOString(), counts, written }, now, deps.retentionMs);
  deps.logger.info('cluster probed', { clusterId, pools: pools.length, written });
  return { clusterId, pools };
}

function countStates(pools: readonly LeaderClassification[]): Record<LeaderState, number> {
  const counts = Object.fromEntries(LEADER_STATES.map((s) => [s, 0])) as Record<LeaderState, number>;
  for (const p of pools) counts[p.state]++;
  return counts;
}

function poolOf(spirit: KubeObject): string {
  const spec = spirit.spec as { nodePool?: unknown } | undefined;
  return typeof spec?.nodePool === 'string' && spec.nodePool ? spec.nodePool : spirit.metadata.name;
}

/** The agent's report, as an observation taken now. A missing report is an observation without holder. */
function observe(spirit: KubeObject, now: Date): LeaderObservation {
  const leader = (
    spirit.status as { leader?: { holder?: unknown; renewTime?: unknown; transitions?: unknown } } | undefined
  )?.leader;
  const observation: LeaderObservation = { observedAt: now.toISOString() };
  if (typeof leader?.holder === 'string' && leader.holder) observation.holder = leader.holder;
  if (typeof leader?.renewTime === 'string') observation.renewTime = leader.renewTime;
  if (typeof leader?.transitions === 'number') observation.transitions = leader.transitions;
  return observation;
}
