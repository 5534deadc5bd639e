/**
 * The single-table key design: every item the functions keep lives in one DynamoDB table with a string
 * partition key `pk` and sort key `sk`. This file is the only place that knows the patterns; the table
 * definition (serverless.yml and the local stack's `ensureTable`) is built from the exports below.
 *
 * | item                      | pk                       | sk                               | TTL (`expiresAt`)        |
 * |---------------------------|--------------------------|----------------------------------|--------------------------|
 * | cluster registry          | `REGISTRY`               | `CLUSTER#<cluster>`              | never                    |
 * | pool reconcile state+lease| `CLUSTER#<cluster>`      | `POOL#<pool>`                    | 7 days after pool is gone|
 * | probe observation         | `CLUSTER#<cluster>`      | `PROBE#<pool>#<iso time>`        | retention window         |
 * | audit record (per cluster)| `CLUSTER#<cluster>`      | `AUDIT#<iso time>`               | retention window         |
 * | audit run (fleet report)  | `AUDIT#<run id>`         | `RUN` / `CLUSTER#<cluster>`      | retention window         |
 * | rollout state             | `ROLLOUT#<rollout id>`   | `STATE` / `CLUSTER#<cluster>`    | never                    |
 * | standalone lease          | `LEASE#<name>`           | `LEASE`                          | 1 day after last expiry  |
 * | event dedupe record       | `EVENT#<event id>`       | `EVENT`                          | dedupe window            |
 *
 * Why the pool state sits under `CLUSTER#<cluster>` (and not its own `POOL#<cluster>#<pool>` partition):
 * the audit lists every pool of a cluster with one Query (`begins_with(sk, 'POOL#')`), no Scan and no GSI.
 * A cluster's pools share a partition; at 2 write units per reconcile that is far below a partition's limit.
 * The registry shares one partition for the same reason (one Query lists the fleet).
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
    const expected = pattern === KEY_PART ? 'lowercase DNS name (a-z, 0-9, "-", ".")' : 'printable, no "#", 1-200 chars';
    throw new TypeError(`${what}: expected a ${expected}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export const REGISTRY_PK = 'REGISTRY';
export const CLUSTER_PREFIX = 'CLUSTER#';
export const POOL_PREFIX = 'POOL#';
export const PROBE_PREFIX = 'PROBE#';
export const AUDIT_PREFIX = 'AUDIT#';

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
  clusterAudit: (clusterId: string, at: Date): ItemKey => ({
    pk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
    sk: AUDIT_PREFIX + at.toISOString(),
  }),
  auditRun: (runId: string): ItemKey => ({ pk: AUDIT_PREFIX + part(runId, 'runId', OPAQUE_PART), sk: 'RUN' }),
  auditRunCluster: (runId: string, clusterId: string): ItemKey => ({
    pk: AUDIT_PREFIX + part(runId, 'runId', OPAQUE_PART),
    sk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
  }),
  rollout: (rolloutId: string): ItemKey => ({ pk: 'ROLLOUT#' + part(rolloutId, 'rolloutId'), sk: 'STATE' }),
  rolloutCluster: (rolloutId: string, clusterId: string): ItemKey => ({
    pk: 'ROLLOUT#' + part(rolloutId, 'rolloutId'),
    sk: CLUSTER_PREFIX + part(clusterId, 'clusterId'),
  }),
  lease: (name: string): ItemKey => ({ pk: 'LEASE#' + part(name, 'lease name', OPAQUE_PART), sk: 'LEASE' }),
  event: (eventId: string): ItemKey => ({ pk: 'EVENT#' + part(eventId, 'event id', OPAQUE_PART), sk: 'EVENT' }),
};

/** Sort-key prefix for listing one cluster's pools / probes (Query with begins_with). */
export const prefixes = {
  pools: POOL_PREFIX,
  probes: (pool: string): string => `${PROBE_PREFIX}${part(pool, 'nodePool')}#`,
  audits: AUDIT_PREFIX,
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
