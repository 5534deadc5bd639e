/** The fleet report from the table, and an audit run done in process (`spiritctl audit`, tests). */
import { randomUUID } from 'node:crypto';
import {
  clusterAuditHistory,
  clusterProbes,
  latestClusterAudit,
  probeSamples,
  putAuditRun,
} from '../../adapters/state-table/index.ts';
import type { FleetReport } from '../../core/audit/index.ts';
import { buildFleetReport } from '../../core/audit/index.ts';
import { mapLimited } from '../../shared/map-limited.ts';
import { auditOneCluster, type ClusterAuditResult } from './cluster-audit.ts';
import type { AuditDeps } from './deps.ts';

/** Registered clusters, all or the named ones; an unknown name is an error naming it. */
async function selectClusters(deps: AuditDeps, ids?: string[]) {
  const all = await deps.clusters();
  if (!ids?.length) return all;
  const byId = new Map(all.map((c) => [c.id, c]));
  const selected: typeof all = [];
  const unknown: string[] = [];
  for (const id of ids) {
    const cluster = byId.get(id);
    if (cluster) selected.push(cluster);
    else unknown.push(id);
  }
  if (unknown.length) throw new Error(`not registered: ${unknown.join(', ')} (see spiritctl clusters list)`);
  return selected;
}

/** Audits the selected clusters now, in this process, as one run (same code as the per-cluster events). */
export async function auditNow(
  deps: AuditDeps,
  options: { clusterIds?: string[]; requestedBy: string },
): Promise<{ runId: string; results: ClusterAuditResult[] }> {
  const clusters = await selectClusters(deps, options.clusterIds);
  const runId = randomUUID();
  const requestedAt = deps.clock().toISOString();
  await putAuditRun(
    deps.table,
    { runId, at: requestedAt, requestedBy: options.requestedBy, clusters: clusters.map((c) => c.id) },
    deps.clock(),
  );
  const results = await mapLimited(clusters, deps.concurrency, (cluster) =>
    auditOneCluster(deps, { clusterId: cluster.id, runId, requestedAt, requestedBy: options.requestedBy }),
  );
  return { runId, results: results.sort((a, b) => a.record.cluster.localeCompare(b.record.cluster)) };
}

/** The fleet report: each cluster's latest audit, with its history (charts) over the deps' window. */
export async function fleetReportFromTable(
  deps: AuditDeps,
  options: { clusterIds?: string[] } = {},
): Promise<FleetReport> {
  const now = deps.clock();
  const since = new Date(now.getTime() - deps.historyWindowMs);
  const clusters = await selectClusters(deps, options.clusterIds);
  const inputs = await Promise.all(
    clusters.map(async (c) => {
      const [latest, history, probes] = await Promise.all([
        latestClusterAudit(deps.table, c.id, now),
        clusterAuditHistory(deps.table, c.id, since, now),
        clusterProbes(deps.table, c.id, since, now),
      ]);
      return { id: c.id, labels: c.labels, latest, history, probes: probeSamples(probes) };
    }),
  );
  return buildFleetReport(inputs, now);
}
