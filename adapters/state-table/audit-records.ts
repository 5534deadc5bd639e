/**
 * Audit records: one item per (cluster, audit run) under the cluster's partition, so the latest audit and
 * the history behind the report's charts are each one Query; one item per run naming the clusters it fanned
 * out to. Both expire after AUDIT_RETENTION_MS through the table's TTL. Probe observations are read here
 * too (loosely: the probe function owns their shape) as leader history.
 *
 * A run that found what an earlier run found stores a note instead of its record (core/audit/audit-record.ts):
 * its run id, time, duration and digest, and `unchangedSince`, the time of the full record it found again.
 * Readers get every run as a whole record all the same: a note is expanded into the record it names (read
 * with the same Query when it is in range, else fetched by key). Records stored before notes existed read
 * as they always did.
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
import type { Item, StateTable } from './table.ts';
import { getItems, putItem, queryAll } from './table.ts';

export const AUDIT_RETENTION_MS = 30 * 24 * 3600 * 1000;
/** Keeps an item well under DynamoDB's 400 KB: a cluster with more findings keeps the most severe ones. */
export const MAX_STORED_FINDINGS = 400;
/** BatchGetItem's limit. */
const MAX_BATCH_GET_KEYS = 100;

/**
 * Writes (or, for a repeated delivery of the same run, overwrites) a cluster's audit record: in full, or, when
 * `record.unchangedSince` is set, as a note naming the full record of that time.
 */
export async function putClusterAudit(table: StateTable, record: AuditRecord, now: Date): Promise<void> {
  if (record.unchangedSince) {
    const since = new Date(record.unchangedSince);
    if (Number.isNaN(since.getTime()))
      throw new TypeError(`unchangedSince: expected an ISO time, got ${JSON.stringify(record.unchangedSince)}`);
    await putItem(table, {
      Item: {
        ...keys.clusterAudit(record.cluster, new Date(record.at)),
        cluster: record.cluster,
        runId: record.runId,
        at: record.at,
        ...(record.durationMs !== undefined ? { durationMs: record.durationMs } : {}),
        ...(record.digest ? { digest: record.digest } : {}),
        unchangedSince: record.unchangedSince,
        // Never outlives the record it names (that one expires AUDIT_RETENTION_MS after it was written).
        [TTL_ATTRIBUTE]: ttlAfter(since, AUDIT_RETENTION_MS),
      },
    });
    return;
  }
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

function toRecord(item: Item): AuditRecord {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    cluster: String(item.cluster),
    runId: String(item.runId),
    at: String(item.at),
    durationMs: item.durationMs as number | undefined,
    findings: (item.findings as AuditRecord['findings']) ?? [],
    pools: (item.pools as AuditRecord['pools']) ?? [],
    requested: (item.requested as string[]) ?? [],
    error: str(item.error),
    ...(item.openYurt ? { openYurt: item.openYurt as AuditRecord['openYurt'] } : {}),
    ...(str(item.digest) ? { digest: str(item.digest) } : {}),
    ...(str(item.unchangedSince) ? { unchangedSince: str(item.unchangedSince) } : {}),
  };
}

const isNote = (item: Item): boolean => typeof item.unchangedSince === 'string';

/** A note read as the run it stands for: the named record's content, the note's run. */
function expandNote(note: Item, full: Item): AuditRecord {
  const record = toRecord(full);
  return {
    ...record,
    runId: String(note.runId),
    at: String(note.at),
    durationMs: note.durationMs as number | undefined,
    ...(typeof note.digest === 'string' ? { digest: note.digest } : {}),
    unchangedSince: String(note.unchangedSince),
  };
}

/**
 * The full records the notes among `items` name, by their run time: those among `items`, and the others
 * read by key (eventually consistent: a named record was written at least one run before its note).
 * Expired ones are left out.
 */
async function namedRecords(
  table: StateTable,
  clusterId: string,
  items: readonly Item[],
  now: Date,
): Promise<Map<string, Item>> {
  const byAt = new Map<string, Item>();
  for (const item of items) if (!isNote(item) && !isExpired(item, now)) byAt.set(String(item.at), item);
  const missing = [...new Set(items.filter(isNote).map((i) => String(i.unchangedSince))).values()].filter(
    (at) => !byAt.has(at) && !Number.isNaN(Date.parse(at)),
  );
  for (let i = 0; i < missing.length; i += MAX_BATCH_GET_KEYS) {
    const batch = missing.slice(i, i + MAX_BATCH_GET_KEYS);
    const found = await getItems(
      table,
      batch.map((at) => keys.clusterAudit(clusterId, new Date(at))),
      false,
    );
    for (const item of found) if (item && !isNote(item) && !isExpired(item, now)) byAt.set(String(item.at), item);
  }
  return byAt;
}

/** Items as records, oldest first; a note whose record is gone is left out. */
async function recordsOf(table: StateTable, clusterId: string, items: readonly Item[], now: Date) {
  const live = items.filter((i) => !isExpired(i, now));
  const named = await namedRecords(table, clusterId, live, now);
  const out: AuditRecord[] = [];
  for (const item of live) {
    if (!isNote(item)) out.push(toRecord(item));
    else {
      const full = named.get(String(item.unchangedSince));
      if (full) out.push(expandNote(item, full));
    }
  }
  return out;
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
    for (const item of out.Items ?? []) {
      if (isExpired(item, now)) continue;
      const [record] = await recordsOf(table, clusterId, [item], now);
      if (record) return record;
    }
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
    ProjectionExpression: '#cluster, #runId, #at, #durationMs, #pools, #requested, #error, #digest, #since, #ttl',
    ExpressionAttributeNames: {
      '#cluster': 'cluster',
      '#runId': 'runId',
      '#at': 'at',
      '#durationMs': 'durationMs',
      '#pools': 'pools',
      '#requested': 'requested',
      '#error': 'error',
      '#digest': 'digest',
      '#since': 'unchangedSince',
      '#ttl': TTL_ATTRIBUTE,
    },
  });
  return recordsOf(table, clusterId, items, now);
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
