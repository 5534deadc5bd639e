/**
 * Audit records: one item per (cluster, audit run) under the cluster's partition, so the latest audit and
 * the history behind the report's charts are each one Query; one item per run naming the clusters it fanned
 * out to. Both expire after AUDIT_RETENTION_MS through the table's TTL. Probe observations are read here
 * too (loosely: the probe function owns their shape) as leader history.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditRecord, LeaderSample, ProbeRecord, ProbeSample } from '../../core/audit/index.ts';
import {
  AUDIT_PREFIX,
  CLUSTER_PREFIX,
  isExpired,
  keys,
  PROBE_PREFIX,
  prefixes,
  TTL_ATTRIBUTE,
  ttlAfter,
} from './keys.ts';
import type { StateTable } from './table.ts';
import { putItem, queryAll } from './table.ts';

export const AUDIT_RETENTION_MS = 30 * 24 * 3600 * 1000;
/** Keeps an item well under DynamoDB's 400 KB: a cluster with more findings keeps the most severe ones. */
export const MAX_STORED_FINDINGS = 400;

/** Writes (or, for a repeated delivery of the same run, overwrites) a cluster's audit record. */
export async function putClusterAudit(table: StateTable, record: AuditRecord, now: Date): Promise<void> {
  const findings = record.findings.slice(0, MAX_STORED_FINDINGS);
  await putItem(table, {
    Item: {
      ...keys.clusterAudit(record.cluster, new Date(record.at)),
      ...record,
      findings,
      ...(record.findings.length > findings.length
        ? { findingsTruncated: record.findings.length - findings.length }
        : {}),
      [TTL_ATTRIBUTE]: ttlAfter(now, AUDIT_RETENTION_MS),
    },
  });
}

export interface AuditRun {
  runId: string;
  at: string;
  requestedBy: string;
  clusters: string[];
}

export async function putAuditRun(table: StateTable, run: AuditRun, now: Date): Promise<void> {
  await putItem(table, {
    Item: { ...keys.auditRun(run.runId), ...run, [TTL_ATTRIBUTE]: ttlAfter(now, AUDIT_RETENTION_MS) },
  });
}

function toRecord(item: Record<string, unknown>): AuditRecord {
  return {
    cluster: String(item.cluster),
    runId: String(item.runId),
    at: String(item.at),
    durationMs: item.durationMs as number | undefined,
    findings: (item.findings as AuditRecord['findings']) ?? [],
    pools: (item.pools as AuditRecord['pools']) ?? [],
    requested: (item.requested as string[]) ?? [],
    error: item.error as string | undefined,
    ...(item.openYurt ? { openYurt: item.openYurt as AuditRecord['openYurt'] } : {}),
  };
}

/** The most recent unexpired audit record of a cluster. */
export async function latestClusterAudit(
  table: StateTable,
  clusterId: string,
  now: Date,
): Promise<AuditRecord | undefined> {
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.name,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': CLUSTER_PREFIX + clusterId, ':prefix': prefixes.audits },
        ScanIndexForward: false,
        Limit: 5,
        ExclusiveStartKey: start,
      }),
    );
    const item = (out.Items ?? []).find((i) => !isExpired(i, now));
    if (item) return toRecord(item);
    start = out.LastEvaluatedKey;
  } while (start);
  return undefined;
}

/** Audit records of a cluster from `since` on, oldest first. */
export async function clusterAuditHistory(
  table: StateTable,
  clusterId: string,
  since: Date,
  now: Date,
): Promise<AuditRecord[]> {
  const items = await queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: {
      ':pk': CLUSTER_PREFIX + clusterId,
      ':from': keys.clusterAudit(clusterId, since).sk,
      // '~' sorts after every ISO timestamp character.
      ':to': `${AUDIT_PREFIX}~`,
    },
    // The history needs no findings (the bulk of an item); every name is aliased (several are reserved words).
    ProjectionExpression: '#cluster, #runId, #at, #pools, #requested, #error, #ttl',
    ExpressionAttributeNames: {
      '#cluster': 'cluster',
      '#runId': 'runId',
      '#at': 'at',
      '#pools': 'pools',
      '#requested': 'requested',
      '#error': 'error',
      '#ttl': TTL_ATTRIBUTE,
    },
  });
  return items.filter((i) => !isExpired(i, now)).map(toRecord);
}

/**
 * Probe observations of a cluster since `since` (sk `PROBE#<pool>#<iso time>`). Fields are read loosely:
 * holder, renewTime, transitions, classification and the time from the key.
 */
export async function clusterProbes(
  table: StateTable,
  clusterId: string,
  since: Date,
  now: Date,
): Promise<{ pool: string; record: ProbeRecord }[]> {
  const items = await queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': CLUSTER_PREFIX + clusterId, ':prefix': prefixes.allProbes },
  });
  const out: { pool: string; record: ProbeRecord }[] = [];
  for (const item of items) {
    if (isExpired(item, now)) continue;
    const rest = String(item.sk).slice(PROBE_PREFIX.length);
    const cut = rest.lastIndexOf('#');
    const [pool, at] = [rest.slice(0, cut), rest.slice(cut + 1)];
    if (!pool || !(Date.parse(at) >= since.getTime())) continue;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    out.push({
      pool,
      record: {
        observedAt: str(item.observedAt) ?? at,
        holder: str(item.holder),
        renewTime: str(item.renewTime),
        transitions: typeof item.transitions === 'number' ? item.transitions : undefined,
        classification: str(item.classification),
      },
    });
  }
  return out.sort((a, b) => a.record.observedAt.localeCompare(b.record.observedAt));
}

/** Leader samples per pool from audit records and probe records, oldest first (the flapping check). */
export function leaderHistory(
  records: AuditRecord[],
  probes: { pool: string; record: ProbeRecord }[],
): Record<string, LeaderSample[]> {
  const out: Record<string, LeaderSample[]> = {};
  const add = (pool: string, sample: LeaderSample) => {
    let samples = out[pool];
    if (!samples) {
      samples = [];
      out[pool] = samples;
    }
    samples.push(sample);
  };
  for (const r of records)
    for (const p of r.pools)
      if (p.leader) add(p.pool, { at: r.at, holder: p.leader.holder, transitions: p.leader.transitions });
  for (const { pool, record } of probes)
    add(pool, { at: record.observedAt, holder: record.holder, transitions: record.transitions });
  for (const samples of Object.values(out)) samples.sort((a, b) => a.at.localeCompare(b.at));
  return out;
}

/** Probe records as chart samples. */
export function probeSamples(probes: { pool: string; record: ProbeRecord }[]): ProbeSample[] {
  return probes.map(({ pool, record }) => ({ pool, at: record.observedAt, transitions: record.transitions }));
}
