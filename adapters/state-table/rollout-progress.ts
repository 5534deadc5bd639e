/**
 * A rollout's per-cluster progress items (`ROLLOUT#<id>` / `PROGRESS#<c>`): one item per cluster, so the
 * state item stays the same size whatever the fleet and a transition writes only the clusters it changed.
 *
 * The state item is the only commit point: it is written last, with a condition on the version read, and
 * names its commit with a random token. A progress item therefore holds two kinds of entries:
 *  - `committed` (+ `committedVersion`): the cluster's progress as of a version known to be committed;
 *  - `P#<token>`: a candidate, written by a transition before it tries to commit; it counts only if the
 *    state item names that token for that version.
 * A reader of version V with token T takes `P#<T>` when its version is V, else `committed`. A transition
 * that commits copies its candidates into `committed` (finalises them); the next transition finalises
 * what a crash left pending before it moves the state on, so below the stored version everything counted
 * is in `committed`. Candidates of a transition that lost (or crashed before its state write, or ran
 * late) never count: another token, or a version the state passed without them. They are removed when
 * the item is next written.
 */
import { randomBytes } from 'node:crypto';
import type { ClusterProgress } from '../../core/rollout/types.ts';
import { mapLimited } from '../../shared/map-limited.ts';
import { keys, prefixes } from './keys.ts';
import type { Item, StateTable } from './table.ts';
import { isConditionFailed, queryAll, updateItem } from './table.ts';

/**
 * One cluster's progress JSON is kept under this many bytes (pool details are dropped past it), so an
 * item with its committed entry and a few candidates stays far below DynamoDB's 400 KB.
 */
export const MAX_PROGRESS_BYTES = 64_000;

/** Progress items written at once by one transition (a wave start, a fleet-wide rollback, a new rollout). */
export const PROGRESS_WRITE_CONCURRENCY = 16;

const CANDIDATE = 'P#';

interface Entry {
  v: number;
  /** Index in the rollout order (canaries first, then by id): the Query returns items by cluster id. */
  order: number;
  progress: ClusterProgress;
}

/** What a reader found for one cluster, and what the next writer has to clean up there. */
export interface StoredProgress {
  /** The progress JSON as stored, compared with the next state's to find the clusters that changed. */
  json: string;
  /** The entry counted is a committed candidate not finalised yet (its writer stopped after the commit). */
  unfinalized?: Entry;
  /** Candidate tokens that can never count (lost, crashed or late transitions). */
  garbage: string[];
}

export const newCommitToken = (): string => randomBytes(9).toString('base64url');

/** Pool details go first (oldest finished clusters gain nothing from them), then the pools' reasons. */
export function progressJson(c: ClusterProgress): string {
  const json = JSON.stringify(c);
  if (Buffer.byteLength(json) <= MAX_PROGRESS_BYTES) return json;
  const noReasons = JSON.stringify({
    ...c,
    pools: Object.fromEntries(Object.entries(c.pools).map(([name, { reason: _r, ...p }]) => [name, p])),
  });
  if (Buffer.byteLength(noReasons) <= MAX_PROGRESS_BYTES) return noReasons;
  return JSON.stringify({ ...c, pools: {} });
}

/** The stored JSON without the observation time: a newer observation alone is not worth a write. */
export function comparableProgress(json: string): string {
  const { observedAt: _o, ...rest } = JSON.parse(json) as ClusterProgress;
  return JSON.stringify(rest);
}

function parseEntry(raw: unknown, what: string): Entry {
  const entry = JSON.parse(String(raw)) as Entry;
  if (!Number.isInteger(entry.v) || !Number.isInteger(entry.order) || typeof entry.progress?.id !== 'string')
    throw new Error(`${what}: expected {v, order, progress}, got ${String(raw).slice(0, 200)}`);
  return entry;
}

export type Resolved =
  | { kind: 'ok'; clusters: ClusterProgress[]; stored: Map<string, StoredProgress> }
  /** A progress item is already finalised past the version read: the state moved on while it was read. */
  | { kind: 'moved' };

/** The clusters as of `version` (committed with `token`), in rollout order. */
export function resolveProgress(rows: Item[], rolloutId: string, version: number, token: string): Resolved {
  const found: Entry[] = [];
  const stored = new Map<string, StoredProgress>();
  for (const row of rows) {
    const what = `rollout ${rolloutId}: progress item ${String(row.sk)}`;
    const committedVersion = row.committedVersion === undefined ? undefined : Number(row.committedVersion);
    if (committedVersion !== undefined && committedVersion > version) return { kind: 'moved' };
    let counted = committedVersion === undefined ? undefined : parseEntry(row.committed, `${what} committed`);
    let unfinalized: Entry | undefined;
    const garbage: string[] = [];
    for (const [name, raw] of Object.entries(row)) {
      if (!name.startsWith(CANDIDATE)) continue;
      const t = name.slice(CANDIDATE.length);
      const entry = parseEntry(raw, `${what} candidate ${t}`);
      if (t === token && entry.v === version) counted = unfinalized = entry;
      else if (entry.v <= version) garbage.push(t);
      // Newer than the version read: a transition in flight; neither counted nor ours to remove.
    }
    // Only failed attempts ever wrote here (a start that crashed or lost): not a cluster of this rollout.
    if (!counted) continue;
    found.push(counted);
    stored.set(counted.progress.id, {
      json: JSON.stringify(counted.progress),
      ...(unfinalized ? { unfinalized } : {}),
      garbage,
    });
  }
  found.sort((a, b) => a.order - b.order);
  return { kind: 'ok', clusters: found.map((e) => e.progress), stored };
}

export function queryProgress(table: StateTable, rolloutId: string): Promise<Item[]> {
  return queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.rollout(rolloutId).pk, ':prefix': prefixes.rolloutProgress },
    ConsistentRead: true,
  });
}

export interface Candidate {
  clusterId: string;
  order: number;
  json: string;
  /** Tokens the writer saw could never count: removed in the same write. */
  garbage: string[];
}

/** Writes the candidates of version `v` under `token` (before the state item: they count only once it names them). */
export async function writeCandidates(
  table: StateTable,
  rolloutId: string,
  v: number,
  token: string,
  candidates: Candidate[],
): Promise<void> {
  await mapLimited(candidates, PROGRESS_WRITE_CONCURRENCY, async (c) => {
    const names: Record<string, string> = {
      '#r': 'rolloutId',
      '#c': 'clusterId',
      '#p': CANDIDATE + token,
      ...Object.fromEntries(c.garbage.map((t, i) => [`#g${i}`, CANDIDATE + t])),
    };
    const remove = c.garbage.length ? ` REMOVE ${c.garbage.map((_, i) => `#g${i}`).join(', ')}` : '';
    await updateItem(table, {
      Key: keys.rolloutProgress(rolloutId, c.clusterId),
      UpdateExpression: `SET #r = :r, #c = :c, #p = :p${remove}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: {
        ':r': rolloutId,
        ':c': c.clusterId,
        ':p': `{"v":${v},"order":${c.order},"progress":${c.json}}`,
      },
    });
  });
}

/**
 * Copies committed candidates of version `v` into `committed` and removes them. Idempotent (finalising
 * `v` twice writes the same entry) and never moves an item backwards: one already finalised past `v` is
 * left as it is (the candidate left there can no longer count, and goes with the item's next write).
 */
export async function finalizeCandidates(
  table: StateTable,
  rolloutId: string,
  v: number,
  token: string,
  entries: { clusterId: string; order: number; json: string }[],
): Promise<void> {
  await mapLimited(entries, PROGRESS_WRITE_CONCURRENCY, async (e) => {
    try {
      await updateItem(table, {
        Key: keys.rolloutProgress(rolloutId, e.clusterId),
        UpdateExpression: 'SET #committed = :e, #cv = :v REMOVE #p',
        ConditionExpression: 'attribute_not_exists(#cv) OR #cv <= :v',
        ExpressionAttributeNames: { '#committed': 'committed', '#cv': 'committedVersion', '#p': CANDIDATE + token },
        ExpressionAttributeValues: { ':e': `{"v":${v},"order":${e.order},"progress":${e.json}}`, ':v': v },
      });
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
    }
  });
}
