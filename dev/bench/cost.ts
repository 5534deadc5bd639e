/**
 * Cost benchmark: runs the local fleet through the work the cost model prices — new pools, a day at rest
 * (sampled over a window), a scheduled rollout tick with nothing to do, a leader probe run, an audit run
 * and a fleet rollout — and measures what each consumed: Lambda invocations and billed ms, PutEvents
 * billed chunks and rule matches, table request units, dead-letter messages, log bytes and metric series.
 * It then checks the model's committed inputs (core/cost/measured-profile.ts) against what it measured.
 * The floor, measured in the same run: an empty invocation through the same local Lambda runtime (what
 * a billed millisecond figure cannot go below here).
 *
 * The audit and the probe run once per cluster per schedule tick, and what such an invocation costs has a part
 * every cluster pays and a part that grows with its pools. One fleet size cannot tell them apart, so both are
 * measured at rest with `--pools` per cluster and again after `--more-pools` (default twice `--pools`) were
 * added to every cluster: the difference is the pools' part. Their invocations run one at a time: Lambda gives each its own CPU,
 * while here they would share the main thread and each be billed the others' work.
 * `npm run bench -- cost [--clusters 4] [--pools 10] [--more-pools 20] [--steady-seconds 30] [--rounds 7]`
 */
import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { parseArgs } from 'node:util';
import { keys, prefixes } from '../../adapters/state-table/keys.ts';
import { readRollout } from '../../adapters/state-table/rollout-state.ts';
import { getItem, queryAll } from '../../adapters/state-table/table.ts';
import { intFlag } from '../../cli/command.ts';
import { DEFAULT_AUDIT_HEARTBEAT_MS } from '../../core/audit/index.ts';
import {
  addCounts,
  type Counts,
  FUNCTIONS,
  scaleCounts,
  type UsageProfile,
  zeroCounts,
} from '../../core/cost/counts.ts';
import { MEASURED_PROFILE } from '../../core/cost/measured-profile.ts';
import { DEFAULT_USAGE } from '../../core/cost/model.ts';
import { DEFAULT_PROBE_HEARTBEAT_MS } from '../../core/leader/index.ts';
import { TERMINAL_PHASES } from '../../core/rollout/types.ts';
import type { LocalFleet } from '../local/fleet/fleet.ts';
import { functionMemoryMb } from '../local/functions/serverless-settings.ts';
import { LocalFunction } from '../local/lambda-runtime.ts';
import { apiWritesPerCluster, createEdgePools, sum, withBenchFleet } from './lib/bench-fleet.ts';
import { LogMeter } from './lib/log-meter.ts';
import { median, round } from './lib/stats.ts';
import { between, type Reading, read, scheduledBetween } from './lib/usage-sampler.ts';

const log = (line: string) => process.stderr.write(`[cost] ${line}\n`);
/** The probe's and the audit's schedules, as the model prices them. */
const PROBE_EVERY_MS = DEFAULT_USAGE.probeEveryMinutes * 60_000;
const AUDIT_EVERY_MS = DEFAULT_USAGE.auditEveryMinutes * 60_000;

function scheduledEvent() {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    region: 'local',
    resources: [],
    detail: {},
  };
}
/** The rollout schedule's constant input (serverless.yml). */
const TICK_INPUT = { command: 'tick', requestedBy: 'schedule' };

const nonNegative = (c: Counts): Counts => {
  const clamp = (v: number) => Math.max(0, v);
  const rec = (r: Counts['invocations']) =>
    Object.fromEntries(
      Object.entries(r)
        .map(([k, v]) => [k, clamp(v ?? 0)])
        .filter(([, v]) => (v as number) > 0),
    );
  return {
    invocations: rec(c.invocations),
    billedMs: rec(c.billedMs),
    billedEvents: clamp(c.billedEvents),
    ruleMatches: clamp(c.ruleMatches),
    readUnits: clamp(c.readUnits),
    writeUnits: clamp(c.writeUnits),
    sqsMessages: clamp(c.sqsMessages),
    logBytes: clamp(c.logBytes),
  };
};
/**
 * Outside the rollout phase the rollout function only runs for the schedule's ticks, which idleRolloutTick
 * prices: its invocations and milliseconds are left out of the other phases (their timing on a loaded
 * machine would otherwise leak in as noise); the ticks' table units and log bytes are subtracted.
 */
const withoutRollout = (c: Counts): Counts => {
  const { rollout: _i, ...invocations } = c.invocations;
  const { rollout: _m, ...billedMs } = c.billedMs;
  return { ...c, invocations, billedMs };
};
const strip = ({
  invocations,
  billedMs,
  billedEvents,
  ruleMatches,
  readUnits,
  writeUnits,
  sqsMessages,
  logBytes,
}: Counts): Counts => ({
  invocations,
  billedMs,
  billedEvents,
  ruleMatches,
  readUnits,
  writeUnits,
  sqsMessages,
  logBytes,
});

/** Each figure's median over several runs of the same work. */
function medianCounts(runs: Counts[]): Counts {
  const m = (f: (c: Counts) => number) => median(runs.map(f));
  const perFunction = (k: 'invocations' | 'billedMs') =>
    Object.fromEntries(
      FUNCTIONS.filter((fn) => runs.some((r) => r[k][fn] !== undefined)).map((fn) => [fn, m((c) => c[k][fn] ?? 0)]),
    );
  return {
    invocations: perFunction('invocations'),
    billedMs: perFunction('billedMs'),
    billedEvents: m((c) => c.billedEvents),
    ruleMatches: m((c) => c.ruleMatches),
    readUnits: m((c) => c.readUnits),
    writeUnits: m((c) => c.writeUnits),
    sqsMessages: m((c) => c.sqsMessages),
    logBytes: m((c) => c.logBytes),
  };
}

function roundCounts(c: Counts, digits = 3): Counts {
  const r = (v: number) => round(v, digits);
  const rec = (x: Counts['invocations']) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, r(v ?? 0)]));
  return {
    invocations: rec(c.invocations),
    billedMs: rec(c.billedMs),
    billedEvents: r(c.billedEvents),
    ruleMatches: r(c.ruleMatches),
    readUnits: r(c.readUnits),
    writeUnits: r(c.writeUnits),
    sqsMessages: r(c.sqsMessages),
    logBytes: r(c.logBytes),
  };
}

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      clusters: { type: 'string', default: '4' },
      pools: { type: 'string', default: '10' },
      'steady-seconds': { type: 'string', default: '30' },
      'more-pools': { type: 'string' },
      rounds: { type: 'string', default: '7' },
    },
  });
  const clusters = intFlag('clusters', values.clusters, 1, 50);
  const pools = intFlag('pools', values.pools, 1, 200);
  const steadySeconds = intFlag('steady-seconds', values['steady-seconds'], 5, 3600);
  const morePools = intFlag('more-pools', values['more-pools'] ?? String(2 * pools), 1, 400);
  const rounds = intFlag('rounds', values.rounds, 1, 50);
  const loadBefore = os.loadavg();

  // What the functions log in the cloud: Powertools at INFO with EMF metrics on (the local default is
  // errors only and no metrics, to keep `npm start` readable).
  const saved = { level: process.env.POWERTOOLS_LOG_LEVEL, metrics: process.env.PS_LOCAL_METRICS };
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  process.env.PS_LOCAL_METRICS = 'true';
  const logs = new LogMeter();
  logs.start();
  try {
    const floorMs = await emptyInvocationFloor();
    log(`starting ${clusters} empty clusters (functions on the main thread, so every log line is counted)…`);
    return await withBenchFleet('cost', { clusters, pools: 0, nodesPerPool: 0, functionThreads: 0 }, async (fleet) => {
      const apiWrites = async () => sum(await apiWritesPerCluster(fleet));
      const now = () => read(fleet, logs, apiWrites);
      const pools0 = clusters * pools;

      log('idle rollout ticks…');
      let a = await now();
      const idleTicks = 5;
      for (let i = 0; i < idleTicks; i++) await fleet.rollout.invoke(TICK_INPUT);
      const idleRolloutTick = scaleCounts(strip(between(a, await now())), 1 / idleTicks);
      const scheduledOverhead = (from: Reading, to: Reading) =>
        scaleCounts(idleRolloutTick, scheduledBetween(from, to).rollout ?? 0);

      // A cluster's first audit also records on its registration what the cluster serves of OpenYurt, once:
      // a cost of no later run, so it happens before anything is measured.
      await fleet.audit.invoke(scheduledEvent());
      await fleet.bus.drain();

      log(`creating ${pools0} pools (one edge node each)…`);
      const senders = async () =>
        (await Promise.all(fleet.clusters.map((c) => c.forwarder.stats()))).reduce(
          (n, { sender: x }) => {
            return {
              received: n.received + x.received,
              coalesced: n.coalesced + x.coalesced,
              sent: n.sent + x.sent,
              batches: n.batches + x.batches,
            };
          },
          { received: 0, coalesced: 0, sent: 0, batches: 0 },
        );
      const senders0 = await senders();
      a = await now();
      const t0 = performance.now();
      await createEdgePools(fleet, pools);
      await fleet.waitConverged(10 * 60_000);
      await fleet.bus.drain();
      const convergeSeconds = (performance.now() - t0) / 1000;
      let b = await now();
      const created = between(a, b);
      const senders1 = await senders();
      const forwarderPerNewPool = Object.fromEntries(
        Object.entries(senders1).map(([k, v]) => [k, round((v - senders0[k as keyof typeof senders0]) / pools0, 2)]),
      );
      const newPool = scaleCounts(
        withoutRollout(nonNegative(addCounts(strip(created), scaleCounts(scheduledOverhead(a, b), -1)))),
        1 / pools0,
      );

      log(`at rest for ${steadySeconds} s…`);
      a = await now();
      await new Promise((r) => setTimeout(r, steadySeconds * 1000));
      await fleet.bus.drain();
      b = await now();
      const rest = withoutRollout(
        nonNegative(addCounts(strip(between(a, b)), scaleCounts(scheduledOverhead(a, b), -1))),
      );
      const poolDay = scaleCounts(rest, 86_400 / steadySeconds / pools0);

      /**
       * One scheduled run of `fn` at rest (the fan-out, then one invocation per cluster), `rounds` times, one
       * invocation at a time: each figure is its median over the rounds; the fan-out's invocation apart.
       */
      const scheduledRuns = async (fn: 'audit' | 'probe') => {
        const f = fleet[fn];
        const concurrency = f.options.concurrency;
        f.options.concurrency = 1;
        try {
          const runs: Counts[] = [];
          const fanOutMs: number[] = [];
          const others: number[] = [];
          for (let i = 0; i < rounds; i++) {
            const from = await now();
            await f.invoke(scheduledEvent());
            const afterFanOut = await now();
            await fleet.bus.drain();
            const to = await now();
            const ms = afterFanOut.fns[fn].billedMs - from.fns[fn].billedMs;
            const run = withoutRollout(
              nonNegative(addCounts(strip(between(from, to)), scaleCounts(scheduledOverhead(from, to), -1))),
            );
            fanOutMs.push(ms);
            others.push(sum(Object.entries(run.invocations).map(([k, n]) => (k === fn ? 0 : (n ?? 0)))));
            runs.push({
              ...run,
              invocations: { [fn]: (run.invocations[fn] ?? 0) - 1 },
              billedMs: { [fn]: (run.billedMs[fn] ?? 0) - ms },
            });
          }
          return {
            run: medianCounts(runs),
            fanOutMs: median(fanOutMs),
            rounds: {
              billedMs: runs.map((r) => round(r.billedMs[fn] ?? 0, 1)),
              writeUnits: runs.map((r) => round(r.writeUnits, 2)),
              readUnits: runs.map((r) => round(r.readUnits, 2)),
              otherInvocations: others,
            },
          };
        } finally {
          f.options.concurrency = concurrency;
        }
      };
      /** The probe and the audit at rest with `poolsPerCluster`, and the audit that first sees them. */
      const perClusterRuns = async (poolsPerCluster: number) => {
        await settle(fleet);
        log(`the first leader probe with ${poolsPerCluster} pools a cluster (records every new pool)…`);
        await fleet.probe.invoke(scheduledEvent());
        await fleet.bus.drain();
        log(`${rounds} scheduled leader probes at rest (fan-out, then one probe per cluster, one at a time)…`);
        const probe = await scheduledRuns('probe');
        log(`the first audit with ${poolsPerCluster} pools a cluster (writes every record in full)…`);
        const full = fleet.audit.options.concurrency;
        fleet.audit.options.concurrency = 1;
        const from = await now();
        await fleet.audit.invoke(scheduledEvent());
        await fleet.bus.drain();
        const auditFull = { run: withoutRollout(nonNegative(strip(between(from, await now())))), fanOutMs: 0 };
        fleet.audit.options.concurrency = full;
        log(`${rounds} scheduled audits at rest (fan-out, then one audit per cluster, one at a time)…`);
        const audit = await scheduledRuns('audit');
        return { probe, audit, auditFull };
      };
      /**
       * What one scheduled run costs once, per cluster and per pool, from runs at `pools` and at `pools +
       * morePools` a cluster: the pools' part is the difference (invocations and events are the clusters' own).
       */
      const splitRuns = (fn: 'audit' | 'probe', one: { run: Counts; fanOutMs: number }, two: { run: Counts }) => {
        const added = clusters * morePools;
        const grown = (k: 'readUnits' | 'writeUnits' | 'logBytes') => Math.max(0, two.run[k] - one.run[k]) / added;
        const grownMs = Math.max(0, (two.run.billedMs[fn] ?? 0) - (one.run.billedMs[fn] ?? 0)) / added;
        const perPool: Counts = {
          ...zeroCounts(),
          billedMs: { [fn]: grownMs },
          readUnits: grown('readUnits'),
          writeUnits: grown('writeUnits'),
          logBytes: grown('logBytes'),
        };
        const own = (total: number, perPoolPart: number) => Math.max(0, total - perPoolPart * pools0) / clusters;
        const perCluster: Counts = {
          ...zeroCounts(),
          invocations: { [fn]: (one.run.invocations[fn] ?? 0) / clusters },
          billedMs: { [fn]: own(one.run.billedMs[fn] ?? 0, grownMs) },
          billedEvents: one.run.billedEvents / clusters,
          ruleMatches: one.run.ruleMatches / clusters,
          readUnits: own(one.run.readUnits, perPool.readUnits),
          writeUnits: own(one.run.writeUnits, perPool.writeUnits),
          logBytes: own(one.run.logBytes, perPool.logBytes),
        };
        const perRun: Counts = { ...zeroCounts(), invocations: { [fn]: 1 }, billedMs: { [fn]: one.fanOutMs } };
        return { perRun, perCluster, perPool };
      };
      // The audit and the probe at rest, with `pools` pools a cluster (the same again after the rollout, with
      // `morePools` more). The first audit and the first probe of a fleet write every record; the runs measured
      // are the ones after, what a fleet pays every 10 and every 5 minutes.
      const atPools = await perClusterRuns(pools);
      log('one fleet rollout (canary 1, waves of 25%)…');
      a = await now();
      const rollout = await driveRollout(fleet);
      await fleet.waitConverged(10 * 60_000);
      await fleet.bus.drain();
      b = await now();
      const rolloutItem = await rolloutItemSize(fleet, rollout.id);
      const ticksInRollout = rollout.ticks + (scheduledBetween(a, b).rollout ?? 0);
      const rolloutPerPool = scaleCounts(
        nonNegative(addCounts(strip(between(a, b)), scaleCounts(idleRolloutTick, -ticksInRollout))),
        1 / pools0,
      );

      log(`adding ${morePools} more pools a cluster, to tell the clusters' part from the pools'…`);
      await createEdgePools(fleet, morePools, pools);
      await fleet.waitConverged(10 * 60_000);
      await fleet.bus.drain();
      const atMorePools = await perClusterRuns(pools + morePools);
      const probe = splitRuns('probe', atPools.probe, atMorePools.probe);
      // A pool unchanged all day is still written once a day (its heartbeat: 2 write units), a share of every
      // probe that no run this short sees.
      probe.perPool.writeUnits += (2 * PROBE_EVERY_MS) / DEFAULT_PROBE_HEARTBEAT_MS;
      const audit = splitRuns('audit', atPools.audit, atMorePools.audit);
      // An unchanged cluster's full record is written again once a day (its heartbeat): the write units a full
      // write takes beyond a note, measured on the run that found the new pools, a share of every audit.
      const heartbeat = splitRuns('audit', atPools.auditFull, atMorePools.auditFull);
      const heartbeatShare = AUDIT_EVERY_MS / DEFAULT_AUDIT_HEARTBEAT_MS;
      audit.perPool.writeUnits += Math.max(0, heartbeat.perPool.writeUnits - audit.perPool.writeUnits) * heartbeatShare;
      audit.perCluster.writeUnits +=
        Math.max(0, heartbeat.perCluster.writeUnits - audit.perCluster.writeUnits) * heartbeatShare;

      const series = [...logs.series];
      const perClusterSeries = series.filter((s) => s.includes('clusterId=')).length / clusters;
      const measured: UsageProfile = {
        measuredBy: `npm run bench -- cost --clusters ${clusters} --pools ${pools} --steady-seconds ${steadySeconds} (${new Date().toISOString().slice(0, 10)})`,
        memoryMb: functionMemoryMb(),
        newPool: roundCounts(newPool),
        poolDay: roundCounts(poolDay),
        idleRolloutTick: roundCounts(idleRolloutTick),
        audit: {
          perRun: roundCounts(audit.perRun),
          perCluster: roundCounts(audit.perCluster),
          perPool: roundCounts(audit.perPool),
        },
        probe: {
          perRun: roundCounts(probe.perRun),
          perCluster: roundCounts(probe.perCluster),
          perPool: roundCounts(probe.perPool),
        },
        rolloutPerPool: roundCounts(rolloutPerPool),
        metricSeries: { fixed: series.length - perClusterSeries * clusters, perCluster: perClusterSeries },
        sizes: {
          rolloutProgressItemBytes: rolloutItem?.progressItemBytes ?? 0,
          putEventsEntriesPerCall: round(fleet.bus.usage().entries / Math.max(1, fleet.bus.usage().putEventsCalls), 2),
        },
      };
      const reconcilesCreating = created.invocations.reconcile ?? 0;
      return {
        benchmark: 'cost',
        fleet: {
          clusters,
          poolsPerCluster: pools,
          pools: pools0,
          /** The audit and the probe were measured again with this many pools a cluster. */
          poolsPerClusterAfterRollout: pools + morePools,
          convergeSeconds: round(convergeSeconds, 1),
          steadySeconds,
        },
        loadAverage: { before: loadBefore.map((x) => round(x, 2)), after: os.loadavg().map((x) => round(x, 2)) },
        floor: { emptyInvocationMs: round(floorMs, 3) },
        knownFigures: {
          apiWritesPerNewPool: round(created.apiWrites / pools0, 2),
          tableWriteUnitsPerReconcile: reconcilesCreating ? round(created.writeUnits / reconcilesCreating, 2) : null,
          reconcileBilledMsMeanPerInvocation: reconcilesCreating
            ? round((created.billedMs.reconcile ?? 0) / reconcilesCreating, 1)
            : null,
          /** Billed ms of an average reconcile ÷ the runtime's empty-invocation floor: how much is the function's own work. */
          reconcileMsVsFloor:
            reconcilesCreating && floorMs > 0
              ? round((created.billedMs.reconcile ?? 0) / reconcilesCreating / floorMs, 1)
              : null,
          rolloutTicksDriven: rollout.ticks,
          rolloutItems: rolloutItem,
          forwarderPerNewPool,
          putEventsEntriesPerCall: round(fleet.bus.usage().entries / Math.max(1, fleet.bus.usage().putEventsCalls), 2),
          rolloutPhase: rollout.phase,
        },
        perClusterRuns: {
          audit: { [pools]: atPools.audit.rounds, [pools + morePools]: atMorePools.audit.rounds },
          probe: { [pools]: atPools.probe.rounds, [pools + morePools]: atMorePools.probe.rounds },
        },
        entriesByType: fleet.bus.usage().entriesByType,
        logLines: logs.lines,
        metricSeries: series,
        measured,
        inputsCheck: checkInputs(measured, MEASURED_PROFILE),
      };
    });
  } finally {
    logs.stop();
    for (const [k, v] of [
      ['POWERTOOLS_LOG_LEVEL', saved.level],
      ['PS_LOCAL_METRICS', saved.metrics],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * Waits until no reconcile has run for a few seconds (at most a minute): notices of pools that just converged
 * still arrive after the fleet is Available, and their table writes would be counted as the next run's.
 */
async function settle(fleet: LocalFleet): Promise<void> {
  for (let i = 0; i < 12; i++) {
    const before = fleet.reconcile.stats.invocations;
    await new Promise((r) => setTimeout(r, 5_000));
    await fleet.bus.drain();
    if (fleet.reconcile.stats.invocations === before) return;
  }
}

/** Median billed ms of an invocation that does nothing, through the same local runtime. */
async function emptyInvocationFloor(): Promise<number> {
  const fn = new LocalFunction(async () => undefined, { name: 'floor', timeoutMs: 1000, concurrency: 1 });
  const samples: number[] = [];
  for (let i = 0; i < 50; i++) {
    const before = fn.stats.billedMs;
    await fn.invoke({});
    samples.push(fn.stats.billedMs - before);
  }
  return median(samples);
}

/** The rollout's state item: its size, and its size per cluster with the pool details left out (what compaction keeps). */
/** The finished rollout's items as stored (bytes of each item's JSON): the state item and a progress item. */
async function rolloutItemSize(fleet: LocalFleet, id: string) {
  const state = await getItem(fleet.table, keys.rollout(id));
  const progress = await queryAll(fleet.table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    ExpressionAttributeValues: { ':pk': keys.rollout(id).pk, ':p': prefixes.rolloutProgress },
  });
  if (!state || progress.length === 0) return null;
  const bytes = (item: unknown) => Buffer.byteLength(JSON.stringify(item));
  return {
    stateItemBytes: bytes(state),
    clusters: progress.length,
    progressItemBytes: round(progress.reduce((n, i) => n + bytes(i), 0) / progress.length, 1),
  };
}

async function driveRollout(fleet: LocalFleet): Promise<{ id: string; ticks: number; phase: string }> {
  const id = `cost-${Date.now()}`;
  await fleet.rollout.invoke({
    command: 'start',
    rollout: {
      id,
      patch: { agent: { version: '0.2.0' } },
      progressDeadline: '10m',
      canary: 1,
      maxConcurrency: '25%',
      soak: '1s',
      autoRollback: true,
    },
  });
  let ticks = 0;
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const state = await readRollout(fleet.table, id);
    if (state && TERMINAL_PHASES.includes(state.phase)) return { id, ticks, phase: state.phase };
    if (Date.now() > deadline) throw new Error(`rollout ${id} still ${state?.phase} after 10 minutes`);
    await new Promise((r) => setTimeout(r, 500));
    await fleet.rollout.invoke({ command: 'tick', rolloutId: id });
    ticks += 1;
  }
}

interface Mismatch {
  input: string;
  committed: number;
  measured: number;
  ratio: number | null;
}

/**
 * Compares committed inputs with measured ones. Counts (invocations, events, units, messages) must be
 * within ±35%; durations and log bytes within a factor of 3 (a shared 2-core machine's timing varies).
 */
export function checkInputs(
  measured: UsageProfile,
  committed: UsageProfile,
): { ok: boolean; checked: number; mismatches: Mismatch[] } {
  const mismatches: Mismatch[] = [];
  let checked = 0;
  const compare = (path: string, m: number, c: number, tolerance: number) => {
    checked += 1;
    // Tiny figures (a fraction of a unit per pool) are noise-dominated either way.
    if (Math.max(Math.abs(m), Math.abs(c)) < 0.05) return;
    const ratio = c === 0 ? null : m / c;
    if (ratio === null || ratio > tolerance || ratio < 1 / tolerance)
      mismatches.push({ input: path, committed: c, measured: m, ratio: ratio === null ? null : round(ratio, 2) });
  };
  const counts = (path: string, m: Counts, c: Counts) => {
    for (const f of FUNCTIONS) {
      compare(`${path}.invocations.${f}`, m.invocations[f] ?? 0, c.invocations[f] ?? 0, 1.35);
      compare(`${path}.billedMs.${f}`, m.billedMs[f] ?? 0, c.billedMs[f] ?? 0, 3);
    }
    for (const k of ['billedEvents', 'ruleMatches', 'readUnits', 'writeUnits', 'sqsMessages'] as const)
      compare(`${path}.${k}`, m[k], c[k], 1.35);
    compare(`${path}.logBytes`, m.logBytes, c.logBytes, 3);
  };
  counts('newPool', measured.newPool, committed.newPool);
  counts('poolDay', measured.poolDay, committed.poolDay);
  counts('idleRolloutTick', measured.idleRolloutTick, committed.idleRolloutTick);
  counts('audit.perRun', measured.audit.perRun, committed.audit.perRun);
  counts('audit.perCluster', measured.audit.perCluster, committed.audit.perCluster);
  counts('audit.perPool', measured.audit.perPool, committed.audit.perPool);
  counts('probe.perRun', measured.probe.perRun, committed.probe.perRun);
  counts('probe.perCluster', measured.probe.perCluster, committed.probe.perCluster);
  counts('probe.perPool', measured.probe.perPool, committed.probe.perPool);
  counts('rolloutPerPool', measured.rolloutPerPool, committed.rolloutPerPool);
  for (const f of FUNCTIONS) compare(`memoryMb.${f}`, measured.memoryMb[f], committed.memoryMb[f], 1);
  compare('metricSeries.fixed', measured.metricSeries.fixed, committed.metricSeries.fixed, 1.35);
  compare('metricSeries.perCluster', measured.metricSeries.perCluster, committed.metricSeries.perCluster, 1.35);
  return { ok: mismatches.length === 0, checked, mismatches };
}
