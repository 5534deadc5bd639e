/**
 * One cluster's audit: observe, judge (core/audit), store the record, and ask for a reconcile of every pool
 * with a fixable finding. An unreachable cluster is a finding too (recorded, not thrown: the next scheduled
 * run tries again, and a retry storm against a cluster that is down helps nobody).
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { ClusterAccessError } from '../../adapters/cluster-access/index.ts';
import {
  clusterAuditHistory,
  clusterProbes,
  latestLeaderProbes,
  leaderHistory,
  meteredTable,
  putClusterAudit,
  recordOpenYurt,
  type StateTable,
  sanitizeErrorMessage,
} from '../../adapters/state-table/index.ts';
import type { AuditRecord, ClusterAudit } from '../../core/audit/index.ts';
import {
  auditCluster,
  auditDigest,
  auditWriteReason,
  DEFAULT_AUDIT_THRESHOLDS,
  unchangedSince,
  unreachableAudit,
} from '../../core/audit/index.ts';
import type { OpenYurtObservation } from '../../core/nodepool-versions.ts';
import type { AuditRequest } from '../../events/index.ts';
import { reconcileRequestDetailSchema, reconcileRequestRouting, toPutEventsEntry } from '../../events/index.ts';
import { sendEntries } from '../common/send-events.ts';
import type { AuditDeps } from './deps.ts';
import { observeCluster } from './observe.ts';

export const AUDIT_REQUESTER = 'audit';

export interface ClusterAuditResult {
  record: AuditRecord;
  /** Reads made against the cluster's apiserver. */
  clusterReads: number;
  tableWriteUnits: number;
  reconcileRequests: number;
}

const sameOpenYurt = (a: OpenYurtObservation | undefined, b: OpenYurtObservation) =>
  a?.nodePoolApiVersion === b.nodePoolApiVersion && a.nodePoolVersions.join() === b.nodePoolVersions.join();

export async function auditOneCluster(deps: AuditDeps, request: AuditRequest): Promise<ClusterAuditResult> {
  const started = performance.now();
  const now = deps.clock();
  const metered = meteredTable(deps.table);
  const table: StateTable = metered.table;
  let clusterReads = 0;
  let audit: ClusterAudit;
  let error: string | undefined;
  let openYurt: OpenYurtObservation | undefined;
  // The audit itself only looks back over the flapping window; the report's charts read the longer history.
  const since = new Date(
    now.getTime() - (deps.thresholds?.flappingWindowMs ?? DEFAULT_AUDIT_THRESHOLDS.flappingWindowMs),
  );
  // Table reads fail the invocation (the bus retries it); only the cluster's own failures become a finding.
  const [history, probes, latestProbes] = await Promise.all([
    clusterAuditHistory(table, request.clusterId, since, now),
    clusterProbes(table, request.clusterId, since, now),
    latestLeaderProbes(table, request.clusterId, now),
  ]);
  try {
    const registration = await deps.cluster(request.clusterId);
    if (!registration) throw new ClusterAccessError(request.clusterId, undefined, 'not-registered');
    const connection = await deps.clusterAccess.connectionFor(registration);
    const client = deps.clusterClient(connection, request.clusterId);
    const observation = await observeCluster(deps, request.clusterId, client, registration).finally(
      () => (clusterReads = client.counters.reads),
    );
    // Read with the NodePools just listed: no request of its own.
    openYurt = await client.nodePoolVersions();
    if (!sameOpenYurt(registration.openYurt, openYurt)) await recordOpenYurt(table, request.clusterId, openYurt, now);
    observation.leaderHistory = leaderHistory(
      history.filter((r) => r.at !== request.requestedAt),
      probes,
    );
    // The probe function's verdict per pool (functions/probe), when it runs.
    observation.probes = Object.fromEntries(
      latestProbes.map((p) => [
        p.nodePool,
        { ...p.observation, classification: p.classification?.state, reason: p.classification?.reason },
      ]),
    );
    audit = auditCluster(observation, { now, fleetDefaults: deps.fleetDefaults, thresholds: deps.thresholds });
  } catch (err) {
    error = sanitizeErrorMessage(err, 300);
    deps.logger.warn('cluster could not be audited', { clusterId: request.clusterId, error });
    audit = unreachableAudit(request.clusterId, error);
  }

  const fixable = new Map<string, string[]>();
  for (const f of audit.findings)
    if (f.fixable && f.pool) fixable.set(f.pool, [...new Set([...(fixable.get(f.pool) ?? []), f.kind])]);
  const requested = deps.events ? [...fixable.keys()].sort() : [];
  const found: AuditRecord = {
    cluster: request.clusterId,
    runId: request.runId,
    at: request.requestedAt,
    findings: audit.findings,
    pools: audit.pools,
    requested,
    ...(error ? { error } : {}),
    ...(openYurt ? { openYurt } : {}),
  };
  // What an earlier run stored decides whether this one stores its record or a note naming that one. A
  // repeated delivery of this run decides as the first did: it compares with the run before it.
  const digest = auditDigest(found);
  const previous = history.findLast((r) => r.at < request.requestedAt);
  const writeReason = auditWriteReason(previous, digest, now, deps.auditHeartbeatMs);
  const record: AuditRecord = {
    ...found,
    durationMs: Math.round(performance.now() - started),
    digest,
    ...(previous && !writeReason ? { unchangedSince: unchangedSince(previous) } : {}),
  };
  // The record first: if sending fails and the bus retries, the retry overwrites this same item.
  await putClusterAudit(table, record, now);
  if (deps.events && requested.length) {
    const entries = requested.map((pool) => {
      const kinds = fixable.get(pool);
      if (!kinds) throw new Error(`audit of ${request.clusterId}: no fixable finding for requested pool ${pool}`);
      return toPutEventsEntry(
        reconcileRequestRouting,
        reconcileRequestDetailSchema,
        {
          clusterId: request.clusterId,
          nodePool: pool,
          reason: `audit:${kinds.join(',')}`.slice(0, 256),
          requestedBy: AUDIT_REQUESTER,
        },
        { eventBusName: deps.eventBusName },
      );
    });
    await sendEntries(deps.events, entries);
  }

  const { metrics } = deps;
  metrics.addMetric('AuditFindings', MetricUnit.Count, audit.findings.length);
  metrics.addMetric(
    'AuditCriticalFindings',
    MetricUnit.Count,
    audit.findings.filter((f) => f.severity === 'critical').length,
  );
  metrics.addMetric('AuditReconcileRequests', MetricUnit.Count, requested.length);
  metrics.addMetric('AuditDuration', MetricUnit.Milliseconds, record.durationMs ?? 0);
  deps.logger.info('cluster audited', {
    clusterId: request.clusterId,
    runId: request.runId,
    findings: audit.findings.length,
    pools: audit.pools.length,
    reconcileRequests: requested.length,
    written: writeReason ?? 'unchanged',
    durationMs: record.durationMs,
  });
  return { record, clusterReads, tableWriteUnits: metered.writeUnits(), reconcileRequests: requested.length };
}
