/**
 * Probe records: leader-election observations per (cluster, pool) with their classification, and results
 * of the capacity probe. Observations expire (`expiresAt`) after a retention window; readers skip expired
 * items themselves because DynamoDB deletes late (and dynalite never does).
 *
 * A probe writes a pool only when its observation says something new (core/leader/probe-record.ts): then
 * 2 write units, the observation (history, for the audit's charts) and the pool's latest record, which
 * carries the window of changes classification reads, so a probe reads a cluster's pools with one Query.
 * Every probe of a cluster writes one run record: when it last looked, and what it found.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type {
  LeaderClassification,
  LeaderObservation,
  LeaderState,
  RecordedLeaderProbe,
} from '../../core/leader/index.ts';
import { isExpired, keys, prefixes, TTL_ATTRIBUTE, ttlAfter } from './keys.ts';
import type { Item, StateTable } from './table.ts';
import { getItem, putItem, queryAll } from './table.ts';

export const DEFAULT_PROBE_RETENTION_MS = 7 * 24 * 3600 * 1000;
export const DEFAULT_CAPACITY_RETENTION_MS = 90 * 24 * 3600 * 1000;

export interface LeaderProbeRecord extends RecordedLeaderProbe {
  clusterId: string;
  nodePool: string;
}

/** Stores one observation (history) and makes it the pool's latest probe. */
export async function recordLeaderProbe(
  table: StateTable,
  record: LeaderProbeRecord,
  now: Date,
  retentionMs = DEFAULT_PROBE_RETENTION_MS,
): Promise<void> {
  const { clusterId, nodePool, observation, classification, recent } = record;
  const at = new Date(observation.observedAt);
  if (Number.isNaN(at.getTime()))
    throw new TypeError(`observation.observedAt: expected an ISO time, got ${JSON.stringify(observation.observedAt)}`);
  const common = { clusterId, nodePool, ...compact(observation), [TTL_ATTRIBUTE]: ttlAfter(now, retentionMs) };
  await putItem(table, { Item: { ...keys.probe(clusterId, nodePool, at), ...common, state: classification.state } });
  await putItem(table, {
    Item: {
      ...keys.probeLatest(clusterId, nodePool),
      ...common,
      classification: compact(classification),
      recent: recent.map((o) => compact(o)),
    },
  });
}

/** One probe of one cluster: when it looked, how many pools it saw in each state, how many it wrote. */
export interface ProbeRunRecord {
  clusterId: string;
  probedAt: string;
  counts: Record<LeaderState, number>;
  written: number;
}

/** Replaces the cluster's run record (one write a probe, whatever the pools). */
export async function recordProbeRun(
  table: StateTable,
  run: ProbeRunRecord,
  now: Date,
  retentionMs = DEFAULT_PROBE_RETENTION_MS,
): Promise<void> {
  await putItem(table, {
    Item: { ...keys.probeRun(run.clusterId), ...run, [TTL_ATTRIBUTE]: ttlAfter(now, retentionMs) },
  });
}

/** The cluster's last probe, unless none ran within the retention window. */
export async function latestProbeRun(
  table: StateTable,
  clusterId: string,
  now: Date,
): Promise<ProbeRunRecord | undefined> {
  const item = await getItem(table, keys.probeRun(clusterId));
  if (!item || isExpired(item, now)) return undefined;
  return {
    clusterId: String(item.clusterId),
    probedAt: String(item.probedAt),
    counts: item.counts as Record<LeaderState, number>,
    written: Number(item.written),
  };
}

/** Every pool's latest probe in one cluster (one Query), expired ones left out, by pool name. */
export async function latestLeaderProbes(
  table: StateTable,
  clusterId: string,
  now: Date,
): Promise<LeaderProbeRecord[]> {
  const items = await queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': clusterPartition(clusterId), ':prefix': prefixes.probeLatest },
  });
  return items
    .filter((i) => !isExpired(i, now))
    .map((i) => {
      const observation = toObservation(i);
      return {
        clusterId: String(i.clusterId),
        nodePool: String(i.nodePool),
        observation,
        classification: i.classification as LeaderClassification,
        // A record written before records carried their window: its own observation is all it knows.
        recent: Array.isArray(i.recent) ? i.recent.map((o: Item) => toObservation(o)) : [observation],
      };
    })
    .sort((a, b) => a.nodePool.localeCompare(b.nodePool));
}

export interface CapacityProbeRecord {
  target: string;
  recordedAt: string;
  /** The probe's JSON report, as printed by `spiritctl probe capacity --json`. */
  report: unknown;
}

/**
 * Stores a capacity probe result. The report is kept as one JSON string: it is read whole, never queried
 * by field, and a string survives values DynamoDB's number type refuses (NaN for "not measured").
 */
export async function recordCapacityProbe(
  table: StateTable,
  target: string,
  report: unknown,
  now: Date,
  retentionMs = DEFAULT_CAPACITY_RETENTION_MS,
): Promise<CapacityProbeRecord> {
  const json = JSON.stringify(report);
  if (json === undefined) throw new TypeError('capacity probe report: expected a JSON-serialisable value');
  await putItem(table, {
    Item: {
      ...keys.capacityProbe(target, now),
      target,
      recordedAt: now.toISOString(),
      report: json,
      [TTL_ATTRIBUTE]: ttlAfter(now, retentionMs),
    },
  });
  return { target, recordedAt: now.toISOString(), report };
}

/** The newest capacity probe result of a target, if any that has not expired. */
export async function latestCapacityProbe(
  table: StateTable,
  target: string,
  now: Date,
): Promise<CapacityProbeRecord | undefined> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.name,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.capacityProbe(target, now).pk, ':prefix': prefixes.capacityRuns },
      ScanIndexForward: false,
      Limit: 5,
    }),
  );
  const item = (out.Items ?? []).find((i) => !isExpired(i, now));
  if (!item) return undefined;
  return { target: String(item.target), recordedAt: String(item.recordedAt), report: JSON.parse(String(item.report)) };
}

/** The partition of a cluster's items (validates the id the same way the item keys do). */
function clusterPartition(clusterId: string): string {
  return keys.probeLatest(clusterId, 'any').pk;
}

function toObservation(i: Item): LeaderObservation {
  return compact({
    observedAt: String(i.observedAt),
    holder: typeof i.holder === 'string' ? i.holder : undefined,
    renewTime: typeof i.renewTime === 'string' ? i.renewTime : undefined,
    transitions: typeof i.transitions === 'number' ? i.transitions : undefined,
  });
}

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
