/**
 * Fleet rollout benchmark: on the local fleet (default 20 clusters × 50 pools, sim kubelet),
 * a rollout with a canary and waves runs to Succeeded, then a rollout whose new version never becomes
 * healthy in one cluster stops and rolls back by itself. Reports the phases' times and what the rollout
 * cost: state-table write units, apiserver reads and writes per cluster, and the reconciles it caused.
 * `npm run bench -- rollout [--clusters 20] [--pools 50] [--soak 2s] [--tick 500ms] [--max-concurrency 25%]`
 */
import { parseArgs } from 'node:util';
import { readRollout } from '../../adapters/state-table/rollout-state.ts';
import { intFlag } from '../../cli/command.ts';
import type { RolloutState } from '../../core/rollout/types.ts';
import { TERMINAL_PHASES } from '../../core/rollout/types.ts';
import type { RolloutResult } from '../../functions/rollout/handler.ts';
import { clusterId, type LocalFleet } from '../local/fleet/fleet.ts';
import {
  apiWritesPerCluster,
  convergedAfter,
  FLEET_SHAPE_FLAGS,
  fleetShape,
  sum,
  withBenchFleet,
} from './lib/bench-fleet.ts';
import { round } from './lib/stats.ts';

const log = (line: string) => process.stderr.write(`[rollout] ${line}\n`);

/** The agent version whose pods never become Ready in the last cluster (the sim kubelet's unhealthyVersions). */
export const BAD_AGENT_VERSION = '0.3.0';

/**
 * On a converged fleet whose last cluster cannot run BAD_AGENT_VERSION: a good rollout with a canary and
 * waves, then a bad one that must stop and roll back by itself, then the fleet healthy again.
 */
export async function rolloutScenario(
  fleet: LocalFleet,
  o: { tickMs: number; maxConcurrency: string; soak: string; badDeadline: string },
) {
  const bad = fleet.clusters.at(-1)!.id;
  log(`rollout 1 (agent 0.2.0, canary 1, waves of ${o.maxConcurrency})…`);
  const common = { canary: 1, maxConcurrency: o.maxConcurrency, soak: o.soak, autoRollback: true };
  const good = await drive(
    fleet,
    { rollout: { id: 'bench-good', patch: { agent: { version: '0.2.0' } }, progressDeadline: '10m', ...common } },
    o.tickMs,
    30 * 60_000,
  );
  log(`rollout 1: ${good.phase} in ${good.seconds}s; rollout 2 (agent ${BAD_AGENT_VERSION}, bad in ${bad})…`);
  const failing = await drive(
    fleet,
    {
      rollout: {
        id: 'bench-bad',
        patch: { agent: { version: BAD_AGENT_VERSION } },
        progressDeadline: o.badDeadline,
        ...common,
      },
    },
    o.tickMs,
    30 * 60_000,
  );
  const healedStart = performance.now();
  await fleet.waitConverged(30 * 60_000);
  const healthyAgainSeconds = round((performance.now() - healedStart) / 1000, 1);
  log(`rollout 2: ${failing.phase} in ${failing.seconds}s; fleet healthy again ${healthyAgainSeconds}s later`);
  return {
    tickMs: o.tickMs,
    canaryAndWaves: good,
    unhealthyVersion: { ...failing, badCluster: bad, fleetHealthyAgainSeconds: healthyAgainSeconds },
    deadLetters: fleet.bus.deadLetters().length,
  };
}

interface Cost {
  ticks: number;
  tableWriteUnits: number;
  clusterReads: number;
  clusterWrites: number;
  reconciles: number;
  apiWrites: number;
}

async function drive(fleet: LocalFleet, request: Record<string, unknown>, tickMs: number, timeoutMs: number) {
  const id = (request.rollout as { id: string }).id;
  const started = performance.now();
  const cost: Cost = { ticks: 0, tableWriteUnits: 0, clusterReads: 0, clusterWrites: 0, reconciles: 0, apiWrites: 0 };
  const reconcilesBefore = fleet.reconcile.stats.invocations;
  const apiBefore = await apiWritesPerCluster(fleet);
  const add = (r: RolloutResult) => {
    cost.ticks += 1;
    cost.tableWriteUnits += r.tableWriteUnits;
    cost.clusterReads += r.clusterReads;
    cost.clusterWrites += r.clusterWrites;
  };
  add(
    (await fleet.rollout.invoke({
      command: 'start',
      rollout: (request as { rollout: object }).rollout,
    })) as RolloutResult,
  );
  let state: RolloutState | undefined;
  const phaseTimes: Record<string, number> = {};
  for (;;) {
    state = await readRollout(fleet.table, id);
    if (state && !(state.phase in phaseTimes)) phaseTimes[state.phase] = round((performance.now() - started) / 1000, 2);
    if (state && TERMINAL_PHASES.includes(state.phase)) break;
    if (performance.now() - started > timeoutMs)
      throw new Error(`rollout ${id} still ${state?.phase} after ${timeoutMs} ms: ${state?.reason}`);
    await new Promise((r) => setTimeout(r, tickMs));
    add((await fleet.rollout.invoke({ command: 'tick', rolloutId: id })) as RolloutResult);
  }
  cost.reconciles = fleet.reconcile.stats.invocations - reconcilesBefore;
  cost.apiWrites = sum(await apiWritesPerCluster(fleet)) - sum(apiBefore);
  const clusters = state!.clusters.length;
  const clusterSeconds = state!.clusters
    .filter((c) => c.startedAt && c.finishedAt)
    .map((c) => (Date.parse(c.finishedAt!) - Date.parse(c.startedAt!)) / 1000);
  return {
    id,
    phase: state!.phase,
    reason: state!.reason,
    waves: state!.wave,
    seconds: round((performance.now() - started) / 1000, 2),
    phaseReachedAtSeconds: phaseTimes,
    clusterUpdateSeconds: { min: round(Math.min(...clusterSeconds), 2), max: round(Math.max(...clusterSeconds), 2) },
    cost,
    perCluster: {
      tableWriteUnits: round(cost.tableWriteUnits / clusters, 1),
      rolloutApiReads: round(cost.clusterReads / clusters, 1),
      rolloutApiWrites: round(cost.clusterWrites / clusters, 1),
      reconciles: round(cost.reconciles / clusters, 1),
      allApiWrites: round(cost.apiWrites / clusters, 1),
    },
    clusterPhases: Object.fromEntries(state!.clusters.map((c) => [c.id, c.phase])),
  };
}

/** The rollout scenario's flags; fleet-ops overrides the bad-version deadline for its larger waves. */
export const ROLLOUT_SCENARIO_FLAGS = {
  soak: { type: 'string', default: '2s' },
  tick: { type: 'string', default: '500' },
  'max-concurrency': { type: 'string', default: '25%' },
  'bad-deadline': { type: 'string', default: '20s' },
} as const;

export function rolloutScenarioOptions(values: Record<string, unknown>) {
  return {
    tickMs: intFlag('tick', values.tick, 10, 600_000),
    maxConcurrency: String(values['max-concurrency']),
    soak: String(values.soak),
    badDeadline: String(values['bad-deadline']),
  };
}

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({ args, options: { ...FLEET_SHAPE_FLAGS, ...ROLLOUT_SCENARIO_FLAGS } });
  const { clusters, pools } = fleetShape(values, { clusters: 2 });
  const scenario = rolloutScenarioOptions(values);
  const bad = clusterId(clusters - 1);
  log(`starting ${clusters} clusters × ${pools} pools (agent ${BAD_AGENT_VERSION} never gets Ready in ${bad})…`);
  const t0 = performance.now();
  return withBenchFleet(
    'rollout',
    { clusters, pools, nodesPerPool: 1, unhealthyVersions: { [bad]: [BAD_AGENT_VERSION] } },
    async (fleet) => {
      const convergeSeconds = await convergedAfter(fleet, t0, 30 * 60_000);
      return {
        fleet: { clusters, pools, poolSpirits: clusters * pools, convergeSeconds },
        ...(await rolloutScenario(fleet, scenario)),
      };
    },
  );
}
