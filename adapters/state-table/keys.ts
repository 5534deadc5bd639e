/**
 * The single-table key design: every item the functions keep lives in one DynamoDB table with a string
 * partition key `pk` and sort key `sk`. This file is the only place that knows the patterns; the table
 * definition (serverless.yml and the local stack's `ensureTable`) is built from the exports below.
 *
 * | item                      | pk                       | sk                               | TTL (`expiresAt`)        |
 * |---------------------------|--------------------------|----------------------------------|--------------------------|
 * | cluster registry          | `REGISTRY`               | `CLUSTER#<cluster>`              | never                    |
 * | pool reconcile state+lease| `CLUSTER#<cluster>`      | `POOL#<pool>`                    | 7 days after pool is gone|
 * |                           |                          |                                  | or after the last failure|
 * |                           |                          |                                  | if it never converged    |
 * | probe observation         | `CLUSTER#<cluster>`      | `PROBE#<pool>#<iso time>`        | retention window         |
 * | latest probe of a pool    | `CLUSTER#<cluster>`      | `PROBE-LATEST#<pool>`            | retention window         |
 * | last probe of a cluster   | `CLUSTER#<cluster>`      | `PROBE-RUN`                      | retention window         |
 * | capacity probe result     | `CAPACITY#<target>`      | `RUN#<iso time>`                 | retention window         |
 * | audit record (per cluster)| `CLUSTER#<cluster>`      | `AUDIT#<iso time of the run>`    | 30 days (audit-records)  |
 * |  or a note naming one     |                          |                                  | of the record it names   |
 * | audit run (fleet report)  | `AUDIT#<run id>`         | `RUN` / `CLUSTER#<cluster>`      | 30 days (audit-records)  |
 * | rollout state             | `ROLLOUT#<rollout id>`   | `STATE`                          | never                    |
 * | rollout progress (cluster)| `ROLLOUT#<rollout id>`   | `PROGRESS#<cluster>`             | never                    |
 * | rollout snapshot (cluster)| `ROLLOUT#<rollout id>`   | `CLUSTER#<cluster>`              | never                    |
 * | rollout index             | `ROLLOUTS`               | `ROLLOUT#<rollout id>`           | never                    |
 * | standalone lease          | `LEASE#<name>`           | `LEASE`                          | 1 day after last expiry  |
 * | event dedupe record       | `EVENT#<event id>`       | `EVENT`                          | dedupe window            |
 *
 * Why the pool state sits under `CLUSTER#<cluster>` (and not its own `POOL#<cluster>#<pool>` partition):
 * the audit lists every pool of a cluster with one Query (`begins_with(sk, 'POOL#')`), no Scan and no GSI.
 * A cluster's pools share a partition; at 2 write units per reconcile that is far below a partition's limit.
 * The registry shares one partition for the same reason (one Query lists the fleet).
 *
 * The latest probe of each pool is kept beside the observation history so "the fleet's leaders now" is one
 * Query per cluster (`begins_with(sk, 'PROBE-LATEST#')`) rather than a read of days of history. Each latest
 * record carries the window of changes classification reads (transitions in the last hour, how long without
 * a holder); the history (`PROBE#<pool>#…`, newest last) is what the audit charts. Capacity probe results get
 * their own partition per target (a cluster id, `local`, a kubeconfig context), newest read with a reverse
 * Query.
 *
 * A rollout's `STATE` item holds its phase, wave, reason, spec and the clusters' count per phase, and takes
 * the conditional write on its version attribute that guards every transition; each cluster's progress is its
 * own `PROGRESS#<cluster>` item, written only when it changed and counted only once the state item names the
 * commit that wrote it (rollout-progress.ts), so neither item grows with the fleet. A tick reads the state
 * item, then the progress items with one Query (`begins_with(sk, 'PROGRESS#')`, which leaves the snapshots
 * out). The per-cluster snapshot items hold the pre-rollout spec fields a rollback restores, written once,
 * before the first change. The index partition lists the fleet's rollouts with one Query (the schedule tick
 * finds the active ones there).
 *
 * No GSI is needed: every access path is a GetItem or a Query on a known partition.
 */
import type { AttributeDefinition, KeySchemaElement } from '@aws-sdk/client-dynamodb';

export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';
/** DynamoDB TTL attribute, epoch *seconds*. DynamoDB may delete late (up to days): readers check it too. */
export const TTL_ATTRIBUTE = 'expiresAt';

export const KEY_SCHEMA: KeySchemaElement[] = [
  { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
  { AttributeName: SORT_KEY, KeyType: 'RANGE' },
];
export const ATTRIBUTE_DEFINITIONS: AttributeDefinition[] = [
  { AttributeName: PARTITION_KEY, AttributeType: 'S' },
  { AttributeName: SORT_KEY, AttributeType: 'S' },
];
export const BILLING_MODE = 'PAY_PER_REQUEST' as const;

export interface ItemKey {
  pk: string;
  sk: string;
}

/** Cluster ids and pool names are DNS-label-like; `#` would break the key patterns, so it is refused. */
const KEY_PART = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
/** Event ids and run ids come from outside (EventBridge uuid, schedule ids): anything printable but `#`. */
const OPAQUE_PART = /^[\x21-\x22\x24-\x7e]{1,200}$/;

function part(value: string, what: string, pattern: RegExp = KEY_PART): string {
  if (typeof value !== 'string' || !pattern.test(value)) {
    const expected =
      pattern === KEY_PART ? 'lowercase DNS name (a-z, 0-9, "-", ".")' : 'printable, no "#", 1-200 chars';
    throw new TypeError(`${what}: expected a ${expected}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export const REGISTRY_PK = 'REGISTRY';
export const CLUSTER_PREFIX = 'CLUSTER#';
export const POOL_PREFIX = 'POOL#';
export const PROBE_PREFIX = 'PROBE#';
export const AUDIT_PREFIX = 'AUDIT#';
export const ROLLOUT_PREFIX = 'ROLLOUT#';
export const ROLLOUT_INDEX_PK = 'ROLLOUTS';
export const PROBE_LATEST_PREFIX = 'PROBE-LATEST#';
export const CAPACITY_PREFIX = 'CAPACITY#';
export const RUN_PREFIX = 'RUN#';
export const PROGRESS_PREFIX = 'PROGRESS#';

export const keys = {
  cluster: (clusterId: string): ItemKey => ({ pk: REGISTRY_PK, sk: CLUSTER_PREFIX + part(clusterId, 'clusterId') }),
  pool: (clusterId: string, pool: string): ItemKey => ({
    pk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
    sk: POOL_PREFIX + part(pool, 'nodePool'),
  }),
  probe: (clusterId: string, pool: string, at: Date): ItemKey => ({
    pk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
    sk: `${PROBE_PREFIX}${part(pool, 'nodePool')}#${at.toISOString()}`,
  }),
  probeLatest: (clusterId: string, pool: string): ItemKey => ({
    pk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
    sk: PROBE_LATEST_PREFIX + part(pool, 'nodePool'),
  }),
  probeRun: (clusterId: string): ItemKey => ({ pk: CLUSTER_PREFIX + part(clusterId, 'clusterId'), sk: 'PROBE-RUN' }),
  capacityProbe: (target: string, at: Date): ItemKey => ({
    pk: CAPACITY_PREFIX + part(target, 'capacity probe target'),
    sk: RUN_PREFIX + at.toISOString(),
  }),
  clusterAudit: (clusterId: string, at: Date): ItemKey => ({
    pk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
    sk: AUDIT_PREFIX + at.toISOString(),
  }),
  auditRun: (runId: string): ItemKey => ({ pk: AUDIT_PREFIX + part(runId, 'runId', OPAQUE_PART), sk: 'RUN' }),
  auditRunCluster: (runId: string, clusterId: string): ItemKey => ({
    pk: AUDIT_PREFIX + part(runId, 'runId', OPAQUE_PART),
    sk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
  }),
  rollout: (rolloutId: string): ItemKey => ({ pk: ROLLOUT_PREFIX + part(rolloutId, 'rolloutId'), sk: 'STATE' }),
  rolloutCluster: (rolloutId: string, clusterId: string): ItemKey => ({
    pk: ROLLOUT_PREFIX + part(rolloutId, 'rolloutId'),
    sk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
  }),
  rolloutProgress: (rolloutId: string, clusterId: string): ItemKey => ({
    pk: ROLLOUT_PREFIX + part(rolloutId, 'rolloutId'),
    sk: PROGRESS_PREFIX + part(clusterId, 'clusterId'),
  }),
  rolloutIndex: (rolloutId: string): ItemKey => ({
    pk: ROLLOUT_INDEX_PK,
    sk: ROLLOUT_PREFIX + part(rolloutId, 'rolloutId'),
  }),
  lease: (name: string): ItemKey => ({ pk: `LEASE#${part(name, 'lease name', OPAQUE_PART)}`, sk: 'LEASE' }),
  event: (eventId: string): ItemKey => ({ pk: `EVENT#${part(eventId, 'event id', OPAQUE_PART)}`, sk: 'EVENT' }),
};

/** Sort-key prefix for listing one cluster's pools / probes (Query with begins_with). */
export const prefixes = {
  pools: POOL_PREFIX,
  probes: (pool: string): string => `${PROBE_PREFIX}${part(pool, 'nodePool')}#`,
  probeLatest: PROBE_LATEST_PREFIX,
  capacityRuns: RUN_PREFIX,
  audits: AUDIT_PREFIX,
  /** Under ROLLOUT_INDEX_PK: every rollout of the fleet. */
  rollouts: ROLLOUT_PREFIX,
  /** Under a rollout's partition: every cluster's progress item (not its snapshot items, `CLUSTER#`). */
  rolloutProgress: PROGRESS_PREFIX,
  /** Every probe observation of a cluster, all pools (the audit's leader history). */
  allProbes: PROBE_PREFIX,
};

/** TTL value (epoch seconds) for `ms` milliseconds after `now`. */
export function ttlAfter(now: Date, ms: number): number {
  return Math.ceil((now.getTime() + ms) / 1000);
}

/** DynamoDB's TTL deletes lazily; an item whose `expiresAt` has passed must be treated as absent. */
export function isExpired(item: Record<string, unknown> | undefined, now: Date): boolean {
  const at = item?.[TTL_ATTRIBUTE];
  return typeof at === 'number' && at * 1000 <= now.getTime();
}
