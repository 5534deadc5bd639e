import type { OpenYurtObservation } from '../nodepool-versions.ts';
import { healthOf } from './audit.ts';
import type { Finding, PoolHealth, PoolHealthState, Severity } from './types.ts';

/** What the audit function stores per cluster and run (the table item carries it plus keys and TTL). */
export interface AuditRecord {
  cluster: string;
  runId: string;
  /** The run's time: every cluster of one run shares it. */
  at: string;
  durationMs?: number;
  findings: Finding[];
  pools: PoolHealth[];
  /** Pools a reconcile request was sent for. */
  requested: string[];
  /** Set when the cluster could not be audited. */
  error?: string;
  /** What the cluster serves of OpenYurt's NodePool (unset when it could not be read). */
  openYurt?: OpenYurtObservation;
  /** What the record says, hashed (audit-record.ts): the next run compares its own with it. */
  digest?: string;
  /**
   * Set when this run found again what the full record of the run at that time says: the run stored only a
   * note, and its findings and pools are that record's (its leader renewals and etcd sizes as of then).
   */
  unchangedSince?: string;
}

/** A leader probe observation, as history for the leader chart. */
export interface ProbeSample {
  pool: string;
  at: string;
  transitions?: number;
}

export interface ChartPoint {
  at: string;
  value: number;
}
export interface ChartSeries {
  pool: string;
  points: ChartPoint[];
}

export interface ClusterReport {
  id: string;
  labels: Record<string, string>;
  auditedAt?: string;
  runId?: string;
  /** `unknown`: never audited. */
  health: PoolHealthState | 'unknown';
  pools: PoolHealth[];
  findings: Finding[];
  requested: string[];
  error?: string;
  openYurt?: OpenYurtObservation;
  history: {
    /** Cumulative leader transitions per pool (the pools that changed most). */
    leaderTransitions: ChartSeries[];
    /** etcd database size (tmpfs memory) per pool, bytes (the largest pools). */
    etcdBytes: ChartSeries[];
    etcdQuotaBytes?: number;
  };
}

export interface FleetReport {
  generatedAt: string;
  summary: {
    clusters: number;
    clustersAudited: number;
    clustersUnhealthy: number;
    pools: number;
    healthyPools: number;
    degradedPools: number;
    criticalPools: number;
    /** degraded + critical. */
    unhealthyPools: number;
    findings: Record<Severity, number>;
    fixable: number;
    reconcilesRequested: number;
  };
  clusters: ClusterReport[];
}

export interface ClusterReportInput {
  id: string;
  labels?: Record<string, string>;
  latest?: AuditRecord;
  /** Earlier and latest audit records, any order. */
  history?: AuditRecord[];
  probes?: ProbeSample[];
}

/** Charts show this many pools each (the most telling ones); the table shows every pool. */
export const CHART_POOLS = 6;

export function buildFleetReport(inputs: ClusterReportInput[], now: Date): FleetReport {
  const clusters = inputs.map(clusterReport).sort((a, b) => a.id.localeCompare(b.id));
  const pools = clusters.flatMap((c) => c.pools);
  const findings = clusters.flatMap((c) => c.findings);
  const count = (s: Severity) => findings.filter((f) => f.severity === s).length;
  const healthy = pools.filter((p) => p.health === 'healthy').length;
  const degraded = pools.filter((p) => p.health === 'degraded').length;
  const critical = pools.filter((p) => p.health === 'critical').length;
  return {
    generatedAt: now.toISOString(),
    summary: {
      clusters: clusters.length,
      clustersAudited: clusters.filter((c) => c.auditedAt).length,
      clustersUnhealthy: clusters.filter((c) => c.health !== 'healthy').length,
      pools: pools.length,
      healthyPools: healthy,
      degradedPools: degraded,
      criticalPools: critical,
      unhealthyPools: degraded + critical,
      findings: { critical: count('critical'), warning: count('warning'), info: count('info') },
      fixable: findings.filter((f) => f.fixable).length,
      reconcilesRequested: clusters.reduce((n, c) => n + c.requested.length, 0),
    },
    clusters,
  };
}

function clusterReport(input: ClusterReportInput): ClusterReport {
  const latest = input.latest;
  const records = [...(input.history ?? []), ...(latest ? [latest] : [])]
    .filter((r, i, all) => all.findIndex((o) => o.at === r.at) === i)
    .sort((a, b) => a.at.localeCompare(b.at));
  const findings = latest?.findings ?? [];
  return {
    id: input.id,
    labels: input.labels ?? {},
    auditedAt: latest?.at,
    runId: latest?.runId,
    health: !latest ? 'unknown' : latest.error ? 'critical' : healthOf(findings),
    pools: latest?.pools ?? [],
    findings,
    requested: latest?.requested ?? [],
    error: latest?.error,
    ...(latest?.openYurt ? { openYurt: latest.openYurt } : {}),
    history: {
      leaderTransitions: topSeries(leaderSeries(records, input.probes ?? []), (s) => spread(s)),
      etcdBytes: topSeries(
        seriesOf(records, (p) => p.etcd?.dbSizeBytes),
        (s) => Math.max(...s.points.map((p) => p.value)),
      ),
      etcdQuotaBytes: latest?.pools
        .map((p) => p.etcd?.quotaBackendBytes)
        .find((q): q is number => typeof q === 'number'),
    },
  };
}

function seriesOf(records: AuditRecord[], value: (p: PoolHealth) => number | undefined): ChartSeries[] {
  const byPool = new Map<string, ChartPoint[]>();
  for (const record of records) {
    for (const pool of record.pools) {
      const v = value(pool);
      if (typeof v !== 'number') continue;
      byPool.set(pool.pool, [...(byPool.get(pool.pool) ?? []), { at: record.at, value: v }]);
    }
  }
  return [...byPool].map(([pool, points]) => ({ pool, points }));
}

function leaderSeries(records: AuditRecord[], probes: ProbeSample[]): ChartSeries[] {
  const series = new Map(seriesOf(records, (p) => p.leader?.transitions).map((s) => [s.pool, s.points]));
  for (const probe of probes) {
    if (typeof probe.transitions !== 'number') continue;
    series.set(probe.pool, [...(series.get(probe.pool) ?? []), { at: probe.at, value: probe.transitions }]);
  }
  return [...series].map(([pool, points]) => ({
    pool,
    points: points.sort((a, b) => a.at.localeCompare(b.at)).filter((p, i, all) => p.at !== all[i - 1]?.at),
  }));
}

const spread = (s: ChartSeries) =>
  Math.max(...s.points.map((p) => p.value)) - Math.min(...s.points.map((p) => p.value));

function topSeries(series: ChartSeries[], score: (s: ChartSeries) => number): ChartSeries[] {
  return series
    .filter((s) => s.points.length > 0)
    .sort((a, b) => score(b) - score(a) || a.pool.localeCompare(b.pool))
    .slice(0, CHART_POOLS);
}
