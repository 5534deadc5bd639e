import { type KubeObject, objectKey } from '../kube.ts';
import { type FleetDefaults, poolSpiritIntent } from '../nodepool.ts';
import type { PoolSpiritStatus } from '../poolspirit/api.ts';
import { labelValue, POOL_LABEL } from '../render/labels.ts';
import { coordinatorFindings } from './coordinator-findings.ts';
import { driftFindings } from './drift.ts';
import { certificateFindings, etcdFindings } from './health-findings.ts';
import { leaderFindings } from './leader.ts';
import { placementFindings } from './placement.ts';
import { missingPoolSpirit, orphans, poolOfSpirit, readiness } from './pool-findings.ts';
import {
  type AuditThresholds,
  type ClusterAudit,
  type ClusterObservation,
  DEFAULT_AUDIT_THRESHOLDS,
  type Finding,
  type PoolHealth,
  type PoolHealthState,
  SEVERITIES,
} from './types.ts';

export interface AuditOptions {
  now: Date;
  fleetDefaults?: FleetDefaults;
  thresholds?: Partial<AuditThresholds>;
}

/**
 * Audits one cluster: every edge NodePool against its PoolSpirit, workload and owned objects. Pure: the
 * audit function gathers the observation (and renders the desired objects with the core), this judges.
 * Findings come out ordered by severity, then pool, then kind.
 */
export function auditCluster(obs: ClusterObservation, options: AuditOptions): ClusterAudit {
  const t = { ...DEFAULT_AUDIT_THRESHOLDS, ...options.thresholds };
  const defaults = options.fleetDefaults ?? {};
  const { clusterId: cluster, now } = { clusterId: obs.clusterId, now: options.now };
  const spirits = new Map(obs.poolSpirits.map((s) => [poolOfSpirit(s), s]));
  const liveByKey = new Map(obs.owned.map((o) => [objectKey(o), o]));
  const nodesByName = new Map(obs.nodes.map((n) => [n.metadata.name, n]));
  const podsByPoolLabel = groupBy(obs.pods, (p) => p.metadata.labels?.[POOL_LABEL] ?? '');

  const findings: Finding[] = [];
  const audited: string[] = [];
  for (const nodePool of obs.nodePools) {
    const pool = nodePool.metadata.name;
    const spirit = spirits.get(pool);
    const intent = poolSpiritIntent(nodePool, defaults);
    if (!intent.wanted) continue;
    audited.push(pool);
    findings.push(...missingPoolSpirit(cluster, nodePool, spirit, defaults));
    if (!spirit) continue;
    const status = spirit.status as PoolSpiritStatus | undefined;
    const available = status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;
    findings.push(...readiness(cluster, pool, spirit, now, t));
    // A leader only exists once the workload runs: judging it before adds noise to the unready finding.
    if (available)
      findings.push(...leaderFindings(cluster, pool, status, obs.leaderHistory?.[pool], obs.probes?.[pool], now, t));
    findings.push(...etcdFindings(cluster, pool, status));
    findings.push(...certificateFindings(cluster, pool, status, now, t));
    const paused = (spirit.spec as { paused?: boolean } | undefined)?.paused === true;
    const drift = paused ? [] : driftFindings(cluster, pool, obs.desired[pool], liveByKey);
    findings.push(...drift);
    const deploymentDrifted = drift.some((f) => f.object?.startsWith('Deployment '));
    findings.push(
      ...placementFindings(cluster, pool, podsByPoolLabel.get(labelValue(pool)) ?? [], nodesByName, deploymentDrifted),
    );
  }
  findings.push(...orphans(cluster, obs.nodePools, obs.poolSpirits, obs.owned, defaults));
  const compatAudited = (obs.coordinator?.compatPools ?? []).filter((pool) => audited.includes(pool));
  findings.push(...coordinatorFindings(cluster, compatAudited, obs.coordinator?.certsSecret));
  findings.sort(compareFindings);

  const pools = audited.map((pool) =>
    poolHealth(
      pool,
      spirits.get(pool),
      findings.filter((f) => f.pool === pool),
    ),
  );
  return { cluster, findings, pools };
}

/** A cluster the audit could not read: one critical finding, no pools. */
export function unreachableAudit(cluster: string, reason: string): ClusterAudit {
  return {
    cluster,
    findings: [
      {
        severity: 'critical',
        kind: 'cluster-unreachable',
        cluster,
        pool: '',
        fixable: false,
        reason: `cluster could not be audited: ${reason}`,
      },
    ],
    pools: [],
  };
}

export function compareFindings(a: Finding, b: Finding): number {
  return (
    SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity) ||
    a.pool.localeCompare(b.pool) ||
    a.kind.localeCompare(b.kind) ||
    (a.object ?? '').localeCompare(b.object ?? '')
  );
}

/** Worst severity wins: any critical → critical, any warning → degraded; info findings keep a pool healthy. */
export function healthOf(findings: readonly Finding[]): PoolHealthState {
  if (findings.some((f) => f.severity === 'critical')) return 'critical';
  if (findings.some((f) => f.severity === 'warning')) return 'degraded';
  return 'healthy';
}

function poolHealth(pool: string, spirit: KubeObject | undefined, findings: Finding[]): PoolHealth {
  const status = spirit?.status as PoolSpiritStatus | undefined;
  return {
    pool,
    health: healthOf(findings),
    phase: status?.phase,
    available: status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false,
    leader: status?.leader
      ? { holder: status.leader.holder, renewTime: status.leader.renewTime, transitions: status.leader.transitions }
      : undefined,
    etcd: status?.etcd
      ? {
          dbSizeBytes: status.etcd.dbSizeBytes,
          quotaBackendBytes: status.etcd.quotaBackendBytes,
          alarms: status.etcd.alarms,
        }
      : undefined,
    findings: findings.length,
  };
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    out.set(k, [...(out.get(k) ?? []), item]);
  }
  return out;
}
