/**
 * Rollout state in the table. A rollout is a state item and one progress item per cluster:
 *  - `ROLLOUT#<id>/STATE`: phase, reason, wave, spec, the clusters' count per phase, and the `version`
 *    attribute that guards every transition (a conditional write on the version read). Its size does not
 *    depend on the fleet. Two invocations that decide from the same version cannot both write: the loser
 *    re-reads and decides again from the winner's state (`transitionRollout`).
 *  - `ROLLOUT#<id>/PROGRESS#<c>`: the cluster's `ClusterProgress` (rollout-progress.ts). A transition writes
 *    the clusters it changed as candidates named by a fresh token, then the state item (the commit: it
 *    names the token), then finalises the candidates. A reader re-assembles the whole `RolloutState` from
 *    the state item and one Query, so the state machine still decides from the whole picture.
 * Why no write is ever half-applied (no transactions: dynalite has none): candidates count only once the
 * state item names their token for that version, so a loser's candidates, or those of a transition that
 * crashed before its state write, never count; a crash after the state write leaves committed candidates
 * that readers count by the token and the next transition finalises before it moves the state on.
 *
 * Other items (keys.ts): `ROLLOUT#<id>/CLUSTER#<c>` the pre-rollout values of the patched spec fields per
 * pool, written once before the cluster's first change (first writer wins, so a re-applied change after a
 * crash never snapshots the new spec as the "previous" one); `ROLLOUTS/ROLLOUT#<id>` the index entry that
 * lets the schedule tick find active rollouts with one Query. Both are written on their own, each
 * idempotently, and the state item never depends on them being current.
 *
 * A rollout stored by an older release as ONE item (every cluster inside its state JSON) is still read;
 * its next transition writes every cluster's progress item and the state item in the new layout.
 */

import { clusterPhaseCounts } from '../../core/rollout/decide.ts';
import type { ClusterProgress, RolloutState } from '../../core/rollout/types.ts';
import { TERMINAL_PHASES } from '../../core/rollout/types.ts';
import { keys, prefixes, ROLLOUT_INDEX_PK } from './keys.ts';
import {
  comparableProgress,
  finalizeCandidates,
  newCommitToken,
  progressJson,
  queryProgress,
  resolveProgress,
  type StoredProgress,
  writeCandidates,
} from './rollout-progress.ts';
import type { StateTable } from './table.ts';
import { getItem, isConditionFailed, putItem, queryAll, updateItem } from './table.ts';

/** The state item holds no cluster, only the spec and counts; this guards against an oversized spec patch. */
export const MAX_STATE_BYTES = 350_000;

/** The state item's `layout` in this format (absent on the old single-item format). */
const LAYOUT = 'progress-items';

/** Reads that find the rollout moving on under them before giving up (a transition would lose anyway). */
const READ_ATTEMPTS = 5;

export class RolloutConflictError extends Error {
  readonly rolloutId: string;
  readonly expectedVersion: number;
  constructor(rolloutId: string, expectedVersion: number) {
    super(`rollout ${rolloutId} changed since version ${expectedVersion} was read`);
    this.name = 'RolloutConflictError';
    this.rolloutId = rolloutId;
    this.expectedVersion = expectedVersion;
  }
}

export class RolloutExistsError extends Error {
  constructor(id: string, detail = '') {
    super(`rollout ${id} already exists${detail}`);
    this.name = 'RolloutExistsError';
  }
}

export class RolloutNotFoundError extends Error {
  constructor(id: string) {
    super(`rollout ${id} does not exist`);
    this.name = 'RolloutNotFoundError';
  }
}

export interface RolloutIndexEntry {
  id: string;
  phase: RolloutState['phase'];
  active: boolean;
  createdAt: string;
  updatedAt: string;
  stateVersion: number;
  reason?: string;
  patch: Record<string, unknown>;
}

/** A rollout as read: the assembled state and what the next write needs to know about its items. */
export interface StoredRollout {
  state: RolloutState;
  /** The stored version's commit token; undefined for a rollout in the old single-item format. */
  commit?: string;
  /** Per cluster id: its stored progress item (empty for the old format: nothing is stored per cluster). */
  progress: ReadonlyMap<string, StoredProgress>;
}

function stateItem(state: RolloutState, commit: string) {
  const { clusters, ...rest } = state;
  const json = JSON.stringify(rest);
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_STATE_BYTES)
    throw new Error(
      `rollout ${state.id}: the state item would be ${bytes} bytes (over ${MAX_STATE_BYTES}): spec.patch too large?`,
    );
  return {
    ...keys.rollout(state.id),
    id: state.id,
    phase: state.phase,
    version: state.version,
    updatedAt: state.updatedAt,
    layout: LAYOUT,
    commit,
    clusterCount: clusters.length,
    clusterPhases: clusterPhaseCounts(clusters),
    state: json,
  };
}

function fromLegacyItem(item: Record<string, unknown>): RolloutState {
  const state = JSON.parse(String(item.state)) as RolloutState;
  // The attribute is the authority: the JSON was written together with it.
  state.version = Number(item.version);
  return state;
}

type Candidates = Parameters<typeof writeCandidates>[4];

/** Stores a new rollout (version 1). Refuses an id that exists. */
export async function createRollout(table: StateTable, initial: RolloutState): Promise<RolloutState> {
  const state = { ...initial, version: 1 };
  // Cheap early refusal; the conditional write below is what guarantees it.
  if (await getItem(table, keys.rollout(state.id))) throw new RolloutExistsError(state.id);
  const commit = newCommitToken();
  const candidates: Candidates = state.clusters.map((c, order) => ({
    clusterId: c.id,
    order,
    json: progressJson(c),
    garbage: [],
  }));
  await writeCandidates(table, state.id, 1, commit, candidates);
  try {
    await putItem(table, { Item: stateItem(state, commit), ConditionExpression: 'attribute_not_exists(pk)' });
  } catch (err) {
    // The candidates written never count: the stored state item names another token.
    if (isConditionFailed(err)) throw new RolloutExistsError(state.id);
    throw err;
  }
  await finalizeQuietly(table, state.id, 1, commit, candidates);
  await updateRolloutIndex(table, state);
  return state;
}

/**
 * The state item first, then the progress items (strongly consistent): every candidate committed by the
 * version read was written before that version's state item, so the Query sees it.
 */
export async function readStoredRollout(table: StateTable, id: string): Promise<StoredRollout | undefined> {
  for (let attempt = 1; ; attempt++) {
    const item = await getItem(table, keys.rollout(id));
    if (!item) return undefined;
    if (item.layout !== LAYOUT) return { state: fromLegacyItem(item), progress: new Map() };
    const version = Number(item.version);
    const commit = String(item.commit);
    const resolved = resolveProgress(await queryProgress(table, id), id, version, commit);
    if (resolved.kind === 'ok') {
      const rest = JSON.parse(String(item.state)) as Omit<RolloutState, 'clusters'>;
      const state: RolloutState = { ...rest, version, clusters: resolved.clusters };
      const expected = Number(item.clusterCount);
      if (state.clusters.length !== expected)
        throw new Error(
          `rollout ${id}: version ${version} counts ${expected} clusters but ${state.clusters.length} progress items belong to it`,
        );
      return { state, commit, progress: resolved.stored };
    }
    if (attempt >= READ_ATTEMPTS) throw new RolloutConflictError(id, version);
  }
}

export async function readRollout(table: StateTable, id: string): Promise<RolloutState | undefined> {
  return (await readStoredRollout(table, id))?.state;
}

/**
 * Writes `next` if the stored version is still the one `from` was read at; the stored state gets that
 * version + 1. Only the clusters whose progress changed (ignoring the observation time alone) are written.
 * Throws RolloutConflictError when another invocation got there first.
 */
export async function writeRollout(table: StateTable, next: RolloutState, from: StoredRollout): Promise<RolloutState> {
  const { id, version: expectedVersion } = from.state;
  const before = from.state.clusters;
  if (next.id !== id || next.clusters.length !== before.length || next.clusters.some((c, i) => c.id !== before[i]?.id))
    throw new Error(`rollout ${id}: a transition keeps the rollout's id and its clusters, in order`);
  // What a crash after the previous commit left pending must be final before the state moves on.
  const leftovers = [...from.progress].flatMap(([clusterId, p]) =>
    p.unfinalized ? [{ clusterId, order: p.unfinalized.order, json: p.json }] : [],
  );
  if (from.commit && leftovers.length) await finalizeCandidates(table, id, expectedVersion, from.commit, leftovers);

  const state = { ...next, version: expectedVersion + 1 };
  const commit = newCommitToken();
  const candidates: Candidates = next.clusters.flatMap((c: ClusterProgress, order) => {
    const json = progressJson(c);
    const stored = from.progress.get(c.id);
    if (stored && comparableProgress(stored.json) === comparableProgress(json)) return [];
    return [{ clusterId: c.id, order, json, garbage: stored?.garbage ?? [] }];
  });
  await writeCandidates(table, id, state.version, commit, candidates);
  try {
    await putItem(table, {
      Item: stateItem(state, commit),
      ConditionExpression: '#version = :expected',
      ExpressionAttributeNames: { '#version': 'version' },
      ExpressionAttributeValues: { ':expected': expectedVersion },
    });
  } catch (err) {
    if (isConditionFailed(err)) throw new RolloutConflictError(id, expectedVersion);
    throw err;
  }
  await finalizeQuietly(table, id, state.version, commit, candidates);
  return state;
}

/**
 * After a commit the candidates already count (the state item names them); finalising only spares later
 * readers the token check, and the next transition does it if this one stops here. So its failure (the
 * invocation's deadline, a throttle) does not fail a transition that is stored.
 */
async function finalizeQuietly(
  table: StateTable,
  id: string,
  version: number,
  commit: string,
  candidates: Candidates,
): Promise<void> {
  try {
    await finalizeCandidates(table, id, version, commit, candidates);
  } catch {
    // Healed by the next transition (see above).
  }
}

export interface Transition<T> {
  state: RolloutState;
  changed: boolean;
  result: T;
}

/**
 * Read → step → conditional write, repeated when another invocation wrote in between (the step runs
 * again on the newer state, observing again if it observes). Returns the stored state and the result of
 * the step that won; `written` is false when the step changed nothing.
 */
export async function transitionRollout<T>(
  table: StateTable,
  id: string,
  step: (current: RolloutState) => Promise<Transition<T>>,
  options: { maxAttempts?: number } = {},
): Promise<{ state: RolloutState; result: T; written: boolean; attempts: number }> {
  const maxAttempts = options.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const read = await readStoredRollout(table, id);
    if (!read) throw new RolloutNotFoundError(id);
    const current = read.state;
    const out = await step(current);
    if (!out.changed) return { state: current, result: out.result, written: false, attempts: attempt };
    try {
      const stored = await writeRollout(table, out.state, read);
      if (stored.phase !== current.phase || stored.reason !== current.reason) await updateRolloutIndex(table, stored);
      return { state: stored, result: out.result, written: true, attempts: attempt };
    } catch (err) {
      if (!(err instanceof RolloutConflictError) || attempt >= maxAttempts) throw err;
    }
  }
}

/**
 * The index entry follows the state; a write from an older state version never overwrites a newer one
 * (two invocations may update it in either order). A crash before this write is healed by the next
 * transition that changes the phase, and `listRollouts` readers re-check the state item when it matters.
 */
export async function updateRolloutIndex(table: StateTable, state: RolloutState): Promise<void> {
  try {
    await updateItem(table, {
      Key: keys.rolloutIndex(state.id),
      UpdateExpression:
        'SET #id = :id, #phase = :phase, #active = :active, #createdAt = :createdAt, #updatedAt = :updatedAt, #stateVersion = :v, #reason = :reason, #patch = :patch',
      ConditionExpression: 'attribute_not_exists(#stateVersion) OR #stateVersion < :v',
      ExpressionAttributeNames: {
        '#id': 'id',
        '#phase': 'phase',
        '#active': 'active',
        '#createdAt': 'createdAt',
        '#updatedAt': 'updatedAt',
        '#stateVersion': 'stateVersion',
        '#reason': 'reason',
        '#patch': 'patch',
      },
      ExpressionAttributeValues: {
        ':id': state.id,
        ':phase': state.phase,
        ':active': !TERMINAL_PHASES.includes(state.phase),
        ':createdAt': state.createdAt,
        ':updatedAt': state.updatedAt,
        ':v': state.version,
        ':reason': state.reason ?? '',
        ':patch': JSON.stringify(state.spec.patch),
      },
    });
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
  }
}

/** The fleet's rollouts, newest first by creation; `activeOnly` keeps those not yet finished. */
export async function listRollouts(
  table: StateTable,
  options: { activeOnly?: boolean } = {},
): Promise<RolloutIndexEntry[]> {
  const items = await queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': ROLLOUT_INDEX_PK, ':prefix': prefixes.rollouts },
  });
  return items
    .map((i) => ({
      id: String(i.id),
      phase: i.phase as RolloutState['phase'],
      active: i.active === true,
      createdAt: String(i.createdAt),
      updatedAt: String(i.updatedAt),
      stateVersion: Number(i.stateVersion),
      ...(i.reason ? { reason: String(i.reason) } : {}),
      patch: JSON.parse(String(i.patch ?? '{}')) as Record<string, unknown>,
    }))
    .filter((e) => !options.activeOnly || e.active)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** Pool name → the pre-rollout values of the patched spec fields. */
export type ClusterSnapshot = Record<string, Record<string, unknown>>;

/**
 * Records the pre-rollout values of pools not yet in the cluster's snapshot and returns the whole stored
 * snapshot. First writer wins, per pool: once a pool is recorded, a later call (after the change was
 * applied, e.g. re-applied after a crash) never replaces its "previous" values with the new spec. A pool
 * that appeared mid-rollout is added on the change that first touches it.
 */
export async function saveClusterSnapshot(
  table: StateTable,
  rolloutId: string,
  clusterId: string,
  pools: ClusterSnapshot,
  now: Date,
): Promise<ClusterSnapshot> {
  const key = keys.rolloutCluster(rolloutId, clusterId);
  const encoded = Object.fromEntries(Object.entries(pools).map(([name, fields]) => [name, JSON.stringify(fields)]));
  try {
    await putItem(table, {
      Item: { ...key, rolloutId, clusterId, takenAt: now.toISOString(), pools: encoded },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    return pools;
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
  }
  const existing = (await readClusterSnapshot(table, rolloutId, clusterId)) ?? {};
  const missing = Object.keys(pools).filter((name) => !(name in existing));
  if (missing.length === 0) return existing;
  const names: Record<string, string> = { '#pools': 'pools' };
  const values: Record<string, unknown> = {};
  const sets = missing.map((name, i) => {
    names[`#p${i}`] = name;
    values[`:v${i}`] = encoded[name];
    return `#pools.#p${i} = if_not_exists(#pools.#p${i}, :v${i})`;
  });
  await updateItem(table, {
    Key: key,
    UpdateExpression: `SET ${sets.join(', ')}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  });
  const snapshot = await readClusterSnapshot(table, rolloutId, clusterId);
  if (!snapshot) throw new Error(`rollout ${rolloutId}: no snapshot of cluster ${clusterId} after writing it`);
  return snapshot;
}

export async function readClusterSnapshot(
  table: StateTable,
  rolloutId: string,
  clusterId: string,
): Promise<ClusterSnapshot | undefined> {
  const item = await getItem(table, keys.rolloutCluster(rolloutId, clusterId));
  if (!item) return undefined;
  const pools = (item.pools ?? {}) as Record<string, string>;
  return Object.fromEntries(
    Object.entries(pools).map(([name, json]) => [name, JSON.parse(json) as Record<string, unknown>]),
  );
}
