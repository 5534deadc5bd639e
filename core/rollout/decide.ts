/**
 * The rollout state machine: one pure step from (state, what the clusters look like now, the time) to the
 * next state and the actions that bring the clusters there. The handler stores the state first and acts
 * second; every action is idempotent and re-issued while its effect is not observed, so a crash between
 * the two (or a lost action) heals on the next step.
 *
 * Per cluster: Pending → Updating (apply) → Soaking (every pool healthy at the target) → Succeeded (healthy
 * for the whole soak; a dip goes back to Updating and restarts the soak). Updating past the progress
 * deadline, or a pool rejecting the spec (Invalid) → Failed; with autoRollback a failed cluster goes
 * straight on to RollingBack → RolledBack (its previous spec is back).
 *
 * Rollout: canaries first (alone), then waves of at most maxConcurrency; a wave starts only when nothing
 * is changing. A canary failure, or more failures than maxFailures, stops it: Failed, or with autoRollback
 * RollingBack every cluster already changed, then RolledBack. Paused holds new waves (clusters already
 * changing keep being watched); Aborted stops everything and undoes nothing.
 */
import { formatDuration, resolveLimit } from './limits.ts';
import type {
  ClusterObservation,
  ClusterPhase,
  ClusterProgress,
  Decision,
  PoolObservation,
  PoolProgress,
  RolloutAction,
  RolloutState,
} from './types.ts';
import { CLUSTER_PHASES } from './types.ts';

const CHANGED = new Set(['Updating', 'Soaking', 'Succeeded', 'Failed']);
const IN_FLIGHT = new Set(['Updating', 'Soaking', 'RollingBack']);

export const isChanged = (c: ClusterProgress) => CHANGED.has(c.phase);
export const isInFlight = (c: ClusterProgress) => IN_FLIGHT.has(c.phase);

/** How many clusters are in each phase, in CLUSTER_PHASES order (phases with none are left out). */
export function clusterPhaseCounts(clusters: readonly ClusterProgress[]): Partial<Record<ClusterPhase, number>> {
  const counts: Partial<Record<ClusterPhase, number>> = {};
  for (const p of CLUSTER_PHASES) {
    const n = clusters.filter((c) => c.phase === p).length;
    if (n) counts[p] = n;
  }
  return counts;
}

/** Clusters a step needs observations of (the handler reads only these). */
export function clustersToObserve(state: RolloutState): string[] {
  if (state.phase !== 'Progressing' && state.phase !== 'Paused' && state.phase !== 'RollingBack') return [];
  return state.clusters.filter(isInFlight).map((c) => c.id);
}

export function concurrencyLimit(state: RolloutState): number {
  return resolveLimit(state.spec.maxConcurrency, state.clusters.length, 'up');
}

export function failureBudget(state: RolloutState): number {
  return resolveLimit(state.spec.maxFailures, state.clusters.length, 'down');
}

export function decide(input: RolloutState, observations: ClusterObservation[], now: Date): Decision {
  const state = structuredClone(input);
  const actions: RolloutAction[] = [];
  const at = now.toISOString();
  const byCluster = newestPerCluster(observations);

  if (state.phase === 'Progressing' || state.phase === 'Paused' || state.phase === 'RollingBack') {
    for (const cluster of state.clusters) {
      if (!isInFlight(cluster)) continue;
      const obs = byCluster.get(cluster.id);
      const fresh =
        obs && (!cluster.observedAt || Date.parse(obs.observedAt) >= Date.parse(cluster.observedAt)) ? obs : undefined;
      if (fresh) fold(cluster, fresh);
      if (cluster.phase === 'RollingBack') stepRollingBack(cluster, fresh, at, actions);
      else stepUpdating(state, cluster, fresh, now, actions);
    }
  }

  if (state.phase === 'Progressing' || state.phase === 'Paused') stopOnFailures(state, at, actions);
  if (state.phase === 'Progressing') startNextWave(state, at, actions);
  if (state.phase === 'RollingBack' && !state.clusters.some((c) => c.phase === 'RollingBack')) {
    state.phase = 'RolledBack';
    state.reason = `${state.reason ?? 'rolled back'}; every changed cluster has its previous spec back`;
  }

  // A newer observation that changes nothing else is not worth a write: the stored version guards against
  // stale writers, and every step observes afresh anyway.
  const changed = comparable(state) !== comparable(input);
  if (changed) state.updatedAt = at;
  else
    state.clusters.forEach((c, i) => {
      c.observedAt = input.clusters[i]?.observedAt ?? c.observedAt;
    });
  return { state, actions, changed };
}

function comparable(state: RolloutState): string {
  return JSON.stringify({
    ...state,
    updatedAt: undefined,
    clusters: state.clusters.map((c) => ({ ...c, observedAt: undefined })),
  });
}

/** Duplicated or reordered deliveries: only the newest observation of each cluster counts. */
function newestPerCluster(observations: ClusterObservation[]): Map<string, ClusterObservation> {
  const out = new Map<string, ClusterObservation>();
  for (const o of observations) {
    const prior = out.get(o.clusterId);
    if (!prior || Date.parse(o.observedAt) > Date.parse(prior.observedAt)) out.set(o.clusterId, o);
  }
  return out;
}

function fold(cluster: ClusterProgress, obs: ClusterObservation): void {
  cluster.observedAt = obs.observedAt;
  if (obs.error) return; // keep the last known pools; the reason says why they are stale
  const pools: Record<string, PoolProgress> = {};
  cluster.poolCount = obs.pools.length;
  cluster.healthyPools = obs.pools.filter(healthy).length;
  for (const p of [...obs.pools].sort((a, b) => a.name.localeCompare(b.name))) {
    if (healthy(p)) continue;
    pools[p.name] = {
      available: p.available,
      atVersion: p.atVersion,
      leaderHealthy: p.leaderHealthy,
      specApplied: p.specAtTarget,
      ...(p.reason ? { reason: p.reason } : {}),
    };
  }
  cluster.pools = pools;
}

const healthy = (p: PoolObservation) => p.specAtTarget && p.available && p.atVersion && p.leaderHealthy && !p.invalid;

function unhealthyReason(obs: ClusterObservation): string {
  if (obs.error) return `cannot read the cluster: ${obs.error}`;
  const bad = obs.pools.filter((p) => !healthy(p));
  const first = bad[0];
  return `${bad.length} of ${obs.pools.length} pools not healthy${first ? ` (${first.name}: ${first.reason ?? 'unhealthy'})` : ''}`;
}

function stepUpdating(
  state: RolloutState,
  cluster: ClusterProgress,
  obs: ClusterObservation | undefined,
  now: Date,
  actions: RolloutAction[],
): void {
  const at = now.toISOString();
  if (obs) {
    const invalid = obs.error ? undefined : obs.pools.find((p) => p.specAtTarget && p.invalid);
    if (invalid) {
      failCluster(state, cluster, `pool ${invalid.name} rejected the spec: ${invalid.invalid}`, at, actions);
      return;
    }
    if (!obs.error && obs.pools.some((p) => !p.specAtTarget))
      actions.push({ kind: 'apply-version', clusterId: cluster.id });
    if (!obs.error && obs.pools.every(healthy)) {
      if (cluster.phase === 'Updating') {
        cluster.phase = 'Soaking';
        cluster.soakStartedAt = obs.observedAt;
        cluster.reason = 'every pool healthy at the target; soaking';
      }
      // A stored state without the soak's start (it is set on entering Soaking) parses to NaN: never soaked.
      const soaked = Date.parse(obs.observedAt) - Date.parse(cluster.soakStartedAt ?? '');
      if (soaked >= state.spec.soakMs) {
        cluster.phase = 'Succeeded';
        cluster.finishedAt = at;
        cluster.reason = `healthy for the whole soak (${formatDuration(state.spec.soakMs)})`;
        return;
      }
    } else {
      const why = unhealthyReason(obs);
      if (cluster.phase === 'Soaking') {
        cluster.phase = 'Updating';
        delete cluster.soakStartedAt;
        cluster.reason = `soak restarted: ${why}`;
      } else {
        cluster.reason = why;
      }
    }
  } else if (cluster.phase === 'Updating' && cluster.observedAt === undefined) {
    // Not observed yet since the wave started: (re)issue the change so a crash after the state write heals.
    actions.push({ kind: 'apply-version', clusterId: cluster.id });
  }
  // A stored state without the wave's start (set when the wave starts) parses to NaN: no deadline.
  const deadline = Date.parse(cluster.startedAt ?? '') + state.spec.progressDeadlineMs;
  if (cluster.phase === 'Updating' && now.getTime() >= deadline) {
    failCluster(
      state,
      cluster,
      `progress deadline (${formatDuration(state.spec.progressDeadlineMs)}) passed: ${cluster.reason ?? 'not healthy'}`,
      at,
      actions,
    );
  }
}

function failCluster(
  state: RolloutState,
  cluster: ClusterProgress,
  reason: string,
  at: string,
  actions: RolloutAction[],
): void {
  // A heal action queued for this cluster in this step would fight the rollback.
  removeActions(actions, cluster.id);
  cluster.failed = true;
  cluster.reason = reason;
  cluster.finishedAt = at;
  delete cluster.soakStartedAt;
  if (state.spec.autoRollback) beginClusterRollback(cluster, at, actions);
  else cluster.phase = 'Failed';
}

function removeActions(actions: RolloutAction[], clusterId: string): void {
  for (let i = actions.length - 1; i >= 0; i--) if (actions[i]?.clusterId === clusterId) actions.splice(i, 1);
}

export function beginClusterRollback(cluster: ClusterProgress, at: string, actions: RolloutAction[]): void {
  cluster.phase = 'RollingBack';
  cluster.rollbackStartedAt = at;
  // Observations made before the rollback say nothing about it.
  delete cluster.observedAt;
  actions.push({ kind: 'rollback', clusterId: cluster.id });
}

function stepRollingBack(
  cluster: ClusterProgress,
  obs: ClusterObservation | undefined,
  at: string,
  actions: RolloutAction[],
): void {
  if (obs && !obs.error && obs.pools.every((p) => p.specAtPrevious)) {
    cluster.phase = 'RolledBack';
    cluster.finishedAt = at;
    cluster.reason = cluster.failed ? `${cluster.reason}; previous spec restored` : 'previous spec restored';
    return;
  }
  if (!actions.some((a) => a.clusterId === cluster.id)) actions.push({ kind: 'rollback', clusterId: cluster.id });
}

function stopOnFailures(state: RolloutState, at: string, actions: RolloutAction[]): void {
  const failed = state.clusters.filter((c) => c.failed);
  const canary = failed.find((c) => c.canary);
  const budget = failureBudget(state);
  if (!canary && failed.length <= budget) return;
  const why = canary
    ? `canary ${canary.id} failed: ${canary.reason}`
    : `${failed.length} clusters failed, more than the ${budget} allowed (${namedIds(failed)})`;
  if (state.spec.autoRollback) {
    state.phase = 'RollingBack';
    state.reason = `${why}; rolling back`;
    for (const c of state.clusters) if (isChanged(c)) beginClusterRollback(c, at, actions);
  } else {
    state.phase = 'Failed';
    state.reason = why;
  }
}

/** Ids named in a reason; the rest are counted, so the state's reason does not grow with the fleet. */
export const REASON_MAX_IDS = 10;

export function namedIds(clusters: readonly ClusterProgress[]): string {
  const named = clusters.slice(0, REASON_MAX_IDS).map((c) => c.id);
  const more = clusters.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}

function startNextWave(state: RolloutState, at: string, actions: RolloutAction[]): void {
  if (state.clusters.some(isInFlight)) return;
  const pending = state.clusters.filter((c) => c.phase === 'Pending');
  if (pending.length === 0) {
    const failed = state.clusters.filter((c) => c.failed).length;
    state.phase = 'Succeeded';
    state.reason = `${state.clusters.length - failed} of ${state.clusters.length} clusters updated${failed ? `, ${failed} failed within the budget` : ''}`;
    return;
  }
  // Canaries go alone: a wave never mixes them with the rest.
  const pool = pending[0]?.canary ? pending.filter((c) => c.canary) : pending;
  const wave = pool.slice(0, concurrencyLimit(state));
  state.wave += 1;
  state.reason = `wave ${state.wave}${wave[0]?.canary ? ' (canary)' : ''}: ${namedIds(wave)}`;
  for (const c of wave) {
    c.phase = 'Updating';
    c.wave = state.wave;
    c.startedAt = at;
    c.reason = 'spec change applied; waiting for every pool to be healthy at the target';
    actions.push({ kind: 'apply-version', clusterId: c.id });
  }
}
