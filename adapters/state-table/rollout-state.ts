/**
 * Rollout state in the table: the whole state machine is ONE item per rollout whose `version` attribute
 * guards every transition (a conditional write on the version read). Two invocations that decide from the
 * same version cannot both write: the loser re-reads and decides again from the winner's state
 * (`transitionRollout`). No transactions (dynalite has none): the snapshot and index items are written on
 * their own, each idempotently, and the state item never depends on them being current.
 *
 * Items (keys.ts): `ROLLOUT#<id>/STATE` the state; `ROLLOUT#<id>/CLUSTER#<c>` the pre-rollout values of
 * the patched spec fields per pool, written once before the cluster's first change (first writer wins, so
 * a re-applied change after a crash never snapshots the new spec as the "previous" one);
 * `ROLLOUTS/ROLLOUT#<id>` the index entry that lets the schedule tick find active rollouts with one Query.
 */
import type { RolloutState } from '../../core/rollout/types.ts';
import { TERMINAL_PHASES } from '../../core/rollout/types.ts';
import { keys, prefixes, ROLLOUT_INDEX_PK } from './keys.ts';
import type { StateTable } from './table.ts';
import { getItem, isConditionFailed, putItem, queryAll, updateItem } from './table.ts';

/** The state JSON is kept well under DynamoDB's 400 KB item limit (see compactForStorage). */
export const MAX_STATE_BYTES = 350_000;

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

/**
 * Pool details of finished clusters are what grows with the fleet; past the size budget they are dropped
 * (the cluster's phase and reason stay), oldest-finished first.
 */
function compactForStorage(state: RolloutState): string {
  let json = JSON.stringify(state);
  if (Buffer.byteLength(json) <= MAX_STATE_BYTES) return json;
  const copy = structuredClone(state);
  for (const c of copy.clusters) {
    if (c.phase === 'Succeeded' || c.phase === 'RolledBack' || c.phase === 'Pending') c.pools = {};
    json = JSON.stringify(copy);
    if (Buffer.byteLength(json) <= MAX_STATE_BYTES) return json;
  }
  for (const c of copy.clusters) for (const p of Object.values(c.pools)) delete p.reason;
  json = JSON.stringify(copy);
  if (Buffer.byteLength(json) > MAX_STATE_BYTES)
    throw new Error(`rollout ${state.id}: state is ${Buffer.byteLength(json)} bytes even without pool details`);
  return json;
}

function stateItem(state: RolloutState) {
  return {
    ...keys.rollout(state.id),
    id: state.id,
    phase: state.phase,
    version: state.version,
    updatedAt: state.updatedAt,
    state: compactForStorage(state),
  };
}

function fromItem(item: Record<string, unknown>): RolloutState {
  const state = JSON.parse(String(item.state)) as RolloutState;
  // The attribute is the authority: the JSON was written together with it.
  state.version = Number(item.version);
  return state;
}

/** Stores a new rollout (version 1). Refuses an id that exists. */
export async function createRollout(table: StateTable, initial: RolloutState): Promise<RolloutState> {
  const state = { ...initial, version: 1 };
  try {
    await putItem(table, { Item: stateItem(state), ConditionExpression: 'attribute_not_exists(pk)' });
  } catch (err) {
    if (isConditionFailed(err)) throw new RolloutExistsError(state.id);
    throw err;
  }
  await updateRolloutIndex(table, state);
  return state;
}

export async function readRollout(table: StateTable, id: string): Promise<RolloutState | undefined> {
  const item = await getItem(table, keys.rollout(id));
  return item ? fromItem(item) : undefined;
}

/**
 * Writes `next` if the stored version is still `expectedVersion`; the stored state gets expectedVersion+1.
 * Throws RolloutConflictError when another invocation got there first.
 */
export async function writeRollout(
  table: StateTable,
  next: RolloutState,
  expectedVersion: number,
): Promise<RolloutState> {
  const state = { ...next, version: expectedVersion + 1 };
  try {
    await putItem(table, {
      Item: stateItem(state),
      ConditionExpression: '#version = :expected',
      ExpressionAttributeNames: { '#version': 'version' },
      ExpressionAttributeValues: { ':expected': expectedVersion },
    });
  } catch (err) {
    if (isConditionFailed(err)) throw new RolloutConflictError(state.id, expectedVersion);
    throw err;
  }
  return state;
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
    const current = await readRollout(table, id);
    if (!current) throw new RolloutNotFoundError(id);
    const out = await step(current);
    if (!out.changed) return { state: current, result: out.result, written: false, attempts: attempt };
    try {
      const stored = await writeRollout(table, out.state, current.version);
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
