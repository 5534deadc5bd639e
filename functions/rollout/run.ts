/**
 * One rollout invocation: a command or a tick. Every step is read → (command) → observe → decide →
 * conditional write → act, in that order:
 *  - the state is written before anything changes in a cluster, so a crash after the write leaves a state
 *    whose next step re-issues the change (decide re-issues it while it is not observed);
 *  - a lost race (another invocation wrote first) re-reads, re-observes and re-decides;
 *  - the actions are idempotent: a pool already carrying the change is skipped, the rollback snapshot is
 *    first-writer-wins, and a rollback only touches pools that differ from their snapshot.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  createRollout,
  listRollouts,
  meteredTable,
  RolloutExistsError,
  readClusterSnapshot,
  readRollout,
  type StateTable,
  sanitizeErrorMessage,
  saveClusterSnapshot,
  transitionRollout,
  updateRolloutIndex,
} from '../../adapters/state-table/index.ts';
import type {
  ClusterObservation,
  ClusterPhase,
  RolloutAction,
  RolloutCommand,
  RolloutState,
} from '../../core/rollout/index.ts';
import {
  applyCommand,
  clusterPhaseCounts,
  clustersToObserve,
  decide,
  newRolloutState,
  observePoolSpirit,
  parseRolloutSpec,
  projectOnto,
  specMatchesPatch,
  specMatchesSnapshot,
} from '../../core/rollout/index.ts';
import type { RolloutCommandDetail } from '../../events/rollout.ts';
import { mapLimited } from '../../shared/map-limited.ts';
import type { RolloutClusterOps } from './cluster-ops.ts';
import type { RolloutDeps } from './deps.ts';

export interface ActionOutcome {
  kind: RolloutAction['kind'];
  clusterId: string;
  /** PoolSpirits written (0 when every pool already had the change). */
  poolsWritten: number;
  error?: string;
}

export interface RolloutSummary {
  rolloutId: string;
  phase: RolloutState['phase'];
  reason?: string;
  wave: number;
  version: number;
  /** This step stored a new state version. */
  written: boolean;
  /** Steps run (more than 1 when another invocation wrote in between). */
  attempts: number;
  actions: ActionOutcome[];
  clusters: Partial<Record<ClusterPhase, number>>;
}

export interface RolloutResult {
  command: RolloutCommandDetail['command'];
  rollouts: RolloutSummary[];
  tableWriteUnits: number;
  clusterReads: number;
  clusterWrites: number;
}

/** Per-invocation meters and cluster clients (one per cluster, reused across the invocation's steps). */
interface Invocation {
  deps: RolloutDeps;
  table: StateTable;
  meter: { tableWriteUnits: number; clusterReads: number; clusterWrites: number };
  ops(clusterId: string): Promise<RolloutClusterOps>;
}

function invocation(deps: RolloutDeps): Invocation {
  const metered = meteredTable(deps.table);
  const meter = {
    get tableWriteUnits() {
      return metered.writeUnits();
    },
    clusterReads: 0,
    clusterWrites: 0,
  };
  const table: StateTable = metered.table;
  const opened = new Map<string, Promise<RolloutClusterOps>>();
  const open = async (clusterId: string): Promise<RolloutClusterOps> => {
    const registration = await deps.cluster(clusterId);
    if (!registration) throw new Error(`cluster ${clusterId} is not registered`);
    const connection = await deps.clusterAccess.connectionFor(registration);
    const ops = deps.clusterOps(connection, clusterId);
    // Count through a wrapper so the meters hold whatever the ops implementation is.
    return {
      counters: ops.counters,
      listPoolSpirits: () => {
        meter.clusterReads++;
        return ops.listPoolSpirits();
      },
      applySpecFields: (name, fields) => {
        meter.clusterWrites++;
        return ops.applySpecFields(name, fields);
      },
    };
  };
  return {
    deps,
    table,
    meter,
    ops(clusterId) {
      let p = opened.get(clusterId);
      if (!p) {
        p = open(clusterId);
        // A failed open (unreachable, not registered) is retried on the next use, not cached.
        p.catch(() => opened.delete(clusterId));
        opened.set(clusterId, p);
      }
      return p;
    },
  };
}

const errorText = (err: unknown) => sanitizeErrorMessage(err, 300);

async function observeCluster(inv: Invocation, state: RolloutState, clusterId: string): Promise<ClusterObservation> {
  const { deps } = inv;
  try {
    const ops = await inv.ops(clusterId);
    const rollingBack = state.clusters.find((c) => c.id === clusterId)?.phase === 'RollingBack';
    const [items, snapshot] = await Promise.all([
      ops.listPoolSpirits(),
      rollingBack ? readClusterSnapshot(inv.table, state.id, clusterId) : Promise.resolve(undefined),
    ]);
    const observedAt = deps.clock().toISOString();
    return {
      clusterId,
      observedAt,
      pools: items.map((i) => observePoolSpirit(i, state.spec.patch, snapshot?.[i.metadata.name])),
    };
  } catch (err) {
    return { clusterId, observedAt: deps.clock().toISOString(), pools: [], error: errorText(err) };
  }
}

async function applyVersion(inv: Invocation, state: RolloutState, clusterId: string): Promise<number> {
  const ops = await inv.ops(clusterId);
  const patch = state.spec.patch;
  const items = await ops.listPoolSpirits();
  // The snapshot is stored before the first write to any pool: a rollback must always find it.
  await saveClusterSnapshot(
    inv.table,
    state.id,
    clusterId,
    Object.fromEntries(items.map((i) => [i.metadata.name, projectOnto(i.spec, patch)])),
    inv.deps.clock(),
  );
  const todo = items.filter((i) => !specMatchesPatch(i.spec, patch));
  await mapLimited(todo, 4, (i) => ops.applySpecFields(i.metadata.name, patch));
  return todo.length;
}

async function rollBack(inv: Invocation, state: RolloutState, clusterId: string): Promise<number> {
  const snapshot = await readClusterSnapshot(inv.table, state.id, clusterId);
  // No snapshot: the change never reached this cluster (it is taken before the first write).
  if (!snapshot) return 0;
  const ops = await inv.ops(clusterId);
  const patch = state.spec.patch;
  const items = await ops.listPoolSpirits();
  const todo = items.flatMap((i) => {
    const saved = snapshot[i.metadata.name];
    return saved && !specMatchesSnapshot(i.spec, patch, saved) ? [{ name: i.metadata.name, saved }] : [];
  });
  await mapLimited(todo, 4, ({ name, saved }) => ops.applySpecFields(name, saved));
  return todo.length;
}

async function perform(inv: Invocation, state: RolloutState, actions: RolloutAction[]): Promise<ActionOutcome[]> {
  return mapLimited(actions, inv.deps.clusterConcurrency, async (action) => {
    try {
      const poolsWritten =
        action.kind === 'apply-version'
          ? await applyVersion(inv, state, action.clusterId)
          : await rollBack(inv, state, action.clusterId);
      return { kind: action.kind, clusterId: action.clusterId, poolsWritten };
    } catch (err) {
      // Not fatal: the next tick re-issues the action; the progress deadline bounds how long it may fail.
      inv.deps.logger.warn('rollout action failed; the next tick retries it', {
        action: action.kind,
        clusterId: action.clusterId,
        error: errorText(err),
      });
      return { kind: action.kind, clusterId: action.clusterId, poolsWritten: 0, error: errorText(err) };
    }
  });
}

/** One step of one rollout: optional command, observe, decide, conditional write, act. */
async function step(inv: Invocation, rolloutId: string, command?: RolloutCommand): Promise<RolloutSummary> {
  return (await stepWithState(inv, rolloutId, command)).summary;
}

async function stepWithState(
  inv: Invocation,
  rolloutId: string,
  command?: RolloutCommand,
): Promise<{ summary: RolloutSummary; state: RolloutState }> {
  const { deps } = inv;
  const out = await transitionRollout(inv.table, rolloutId, async (current) => {
    const now = deps.clock();
    let state = current;
    let changed = false;
    if (command) ({ state, changed } = applyCommand(current, command, now));
    const observations = await mapLimited(clustersToObserve(state), deps.clusterConcurrency, (id) =>
      observeCluster(inv, state, id),
    );
    const d = decide(state, observations, now);
    return { state: d.state, changed: changed || d.changed, result: d.actions };
  });
  const actions = await perform(inv, out.state, out.result);
  const clusters = clusterPhaseCounts(out.state.clusters);
  if (out.result.length)
    deps.logger.info('rollout step', {
      rolloutId,
      phase: out.state.phase,
      wave: out.state.wave,
      version: out.state.version,
      actions: out.result,
    });
  const summary: RolloutSummary = {
    rolloutId,
    phase: out.state.phase,
    ...(out.state.reason ? { reason: out.state.reason } : {}),
    wave: out.state.wave,
    version: out.state.version,
    written: out.written,
    attempts: out.attempts,
    actions,
    clusters,
  };
  return { summary, state: out.state };
}

async function start(
  inv: Invocation,
  detail: Extract<RolloutCommandDetail, { command: 'start' }>,
): Promise<RolloutSummary> {
  const { deps } = inv;
  const now = deps.clock();
  const spec = parseRolloutSpec({ ...detail.rollout, id: detail.rollout.id ?? deps.newRolloutId(now) });
  const clusters = await deps.clusters(spec.selector);
  const initial = newRolloutState(
    spec,
    clusters.map((c) => c.id),
    now,
  );
  try {
    await createRollout(inv.table, initial);
  } catch (err) {
    if (!(err instanceof RolloutExistsError)) throw err;
    // A duplicated start (same id, same request) is the same rollout; a different request is a mistake.
    const existing = await readRollout(inv.table, spec.id);
    if (!existing || JSON.stringify(existing.spec) !== JSON.stringify(spec)) {
      throw new RolloutExistsError(spec.id, ' with a different spec; pick another id');
    }
    // The first attempt may have stopped between the state and the index write.
    await updateRolloutIndex(inv.table, existing);
  }
  return step(inv, spec.id);
}

/** Runs one command (or tick) against the table and the clusters; the handler's whole job. */
export async function runRollout(deps: RolloutDeps, detail: RolloutCommandDetail): Promise<RolloutResult> {
  const inv = invocation(deps);
  let rollouts: RolloutSummary[];
  switch (detail.command) {
    case 'start':
      rollouts = [await start(inv, detail)];
      break;
    case 'tick': {
      const entries: { id: string; phase?: string; reason?: string }[] = detail.rolloutId
        ? [{ id: detail.rolloutId }]
        : await listRollouts(inv.table, { activeOnly: true });
      rollouts = [];
      const failures: string[] = [];
      for (const entry of entries) {
        // One rollout's trouble must not hold the others back; the failure still fails the tick (retried).
        try {
          const { summary, state } = await stepWithState(inv, entry.id);
          // An index entry left behind by a crash between the state write and the index write.
          if (
            entry.phase !== undefined &&
            (entry.phase !== state.phase || (entry.reason ?? '') !== (state.reason ?? ''))
          ) {
            await updateRolloutIndex(inv.table, state);
          }
          rollouts.push(summary);
        } catch (err) {
          if (detail.rolloutId) throw err;
          deps.logger.error('rollout step failed', { rolloutId: entry.id, error: errorText(err) });
          failures.push(`${entry.id}: ${errorText(err)}`);
        }
      }
      if (failures.length) throw new Error(`tick failed for ${failures.length} rollout(s): ${failures.join('; ')}`);
      break;
    }
    default:
      rollouts = [await step(inv, detail.rolloutId, { command: detail.command, by: detail.requestedBy })];
  }
  deps.metrics.addMetric('TableWriteUnits', MetricUnit.Count, inv.meter.tableWriteUnits);
  deps.metrics.addMetric('ClusterWrites', MetricUnit.Count, inv.meter.clusterWrites);
  return { command: detail.command, rollouts, ...inv.meter };
}
