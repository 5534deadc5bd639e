/**
 * Local fleet benchmark: how fast the whole system converges a fleet from empty, and then as many pools
 * again once warm, against the local API's own write throughput measured in the same run; event-to-Available
 * latency of a new pool; how many bus events one change costs.
 * `npm run bench -- fleet [--clusters 20] [--pools 50] [--latency-samples 20]`
 */

import { parseArgs } from 'node:util';
import { Watch } from '@kubernetes/client-node';
import { RECONCILER_USER_AGENT } from '../../adapters/kubernetes/api-client.ts';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { intFlag } from '../../cli/command.ts';
import { type FleetCluster, type LocalFleet, localApiOf } from '../local/fleet/fleet.ts';
import { createIfMissing, edgeNode, nodePool } from '../local/fleet/seed.ts';
import {
  apiWritesPerCluster,
  createEdgePools,
  FLEET_SHAPE_FLAGS,
  fleetShape,
  sum,
  withBenchFleet,
} from './lib/bench-fleet.ts';
import { median, percentile, round, stealMeter } from './lib/stats.ts';
import { measureWriteFloor } from './local-api.ts';

const log = (line: string) => process.stderr.write(`[fleet] ${line}\n`);

/** A watch event's object, as JSON: only the conditions are read. */
type WithConditions = { status?: { conditions?: Array<{ type?: string; status?: string }> } } | undefined;

function available(obj: WithConditions): boolean {
  return (obj?.status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True');
}

/** Resolves with the time the named PoolSpirit first reports Available (watching, not polling). */
function whenAvailable(c: FleetCluster, name: string): { ready: Promise<number>; stop(): void } {
  let controller: AbortController | undefined;
  const ready = new Promise<number>((resolve, reject) => {
    new Watch(c.kubeConfig)
      .watch(
        '/apis/poolspirit.io/v1alpha1/poolspirits',
        { fieldSelector: `metadata.name=${name}` },
        (_type, obj) => {
          if (available(obj)) resolve(performance.now());
        },
        (err) => (err ? reject(err) : undefined),
      )
      .then((ac) => (controller = ac), reject);
  });
  return { ready, stop: () => controller?.abort() };
}

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      ...FLEET_SHAPE_FLAGS,
      'latency-samples': { type: 'string', default: '20' },
      'floor-repeats': { type: 'string', default: '5' },
      'floor-warmup': { type: 'string', default: '15' },
      'function-threads': { type: 'string', default: '1' },
      // Default: the fleet's own choice (defaultClusterThreads); 0 keeps every cluster on the main thread.
      'cluster-threads': { type: 'string' },
      runs: { type: 'string', default: '1' },
    },
  });
  const { clusters, pools } = fleetShape(values);
  const samples = intFlag('latency-samples', values['latency-samples'], 1, 1000);
  const functionThreads = intFlag('function-threads', values['function-threads'], 0, 8);
  const clusterThreads =
    values['cluster-threads'] === undefined ? undefined : intFlag('cluster-threads', values['cluster-threads'], 0, 64);
  const runs = intFlag('runs', values.runs, 1, 15);

  const floorRepeats = intFlag('floor-repeats', values['floor-repeats'], 1, 20);
  // The floor rises by a third over its first ~15 runs in a process (dev/bench/local-api.ts, warmupRepeats), so it
  // is taken warm, and held against the fleet's warm round (dev/bench/HISTORY.md, former decision 0034), not its first.
  const floorWarmup = intFlag('floor-warmup', values['floor-warmup'], 0, 50);
  /** The best creates/s of the memory backend's floor (of its concurrencies) and each concurrency's. */
  const measureFloor = async (keepAlive: boolean) => {
    log(`measuring the local API write floor (memory backend, ${keepAlive ? 'keep-alive client' : 'client-node'})…`);
    const steal = await stealMeter();
    const t0 = performance.now();
    const floor = await measureWriteFloor({
      backends: ['memory'],
      repeats: floorRepeats,
      warmupRepeats: floorWarmup,
      keepAlive,
      log,
    });
    const createsPerSec = floor.backends.memory!.createsPerSec;
    /** CPU time the host took from this machine while the floor was measured (its warm-up included). */
    const hostSteal = await steal.stop((performance.now() - t0) / 1000);
    return { createsPerSec, best: Math.max(...Object.values(createsPerSec)), hostSteal };
  };

  const bracketedRun = async () => {
    // The floor is measured right before and right after the fleet, and the fleet compared with their mean:
    // on a shared machine the floor alone moved by a third between runs, and one taken only before the
    // fleet says nothing of how the machine was while the fleet ran.
    const floorBefore = await measureFloor(false);
    const keepAliveFloor = await measureFloor(true);
    const fleetRun = await convergeOnce({ clusters, pools, samples, functionThreads, clusterThreads });
    const floorAfter = await measureFloor(false);
    // Warm against warm: the floor is taken after its warm-up runs, and a fleet's first round runs partly in
    // code V8 has not optimized yet (former decision 0034 in dev/bench/HISTORY.md measured the second round ~25%
    // cheaper in CPU).
    const writesPerSec = fleetRun.convergeWarm.apiWritesPerSec;
    const fromEmptyWritesPerSec = fleetRun.convergeFromEmpty.apiWritesPerSec;
    const floorBest = (floorBefore.best + floorAfter.best) / 2;
    return {
      ...fleetRun,
      /**
       * The local API's raw create throughput through client-node as it comes (a connection per request),
       * the floor the issue's figures were measured against: before and after the fleet ran, and their mean.
       */
      floor: { before: floorBefore, after: floorAfter, best: round(floorBest, 1) },
      /** The same through a client that keeps its connections open, as the fleet's own clients do (before). */
      keepAliveFloor,
      /** API writes/s while the warm fleet converged its second round, as a fraction of the floors' mean. */
      throughputVsFloor: round(writesPerSec / floorBest, 3),
      /**
       * The same for the first round, from empty in threads just started (the figure before former decision
       * 0034, dev/bench/HISTORY.md).
       */
      fromEmptyThroughputVsFloor: round(fromEmptyWritesPerSec / floorBest, 3),
      /** The warm round against the floor before the fleet only, as figures before the bracketing were measured. */
      throughputVsFloorBefore: round(writesPerSec / floorBefore.best, 3),
      throughputVsKeepAliveFloor: round(writesPerSec / keepAliveFloor.best, 3),
    };
  };
  const results: Array<Awaited<ReturnType<typeof bracketedRun>>> = [];
  for (let r = 1; r <= runs; r++) {
    if (runs > 1) log(`run ${r}/${runs}`);
    results.push(await bracketedRun());
  }
  const medianOf = (pick: (r: (typeof results)[number]) => number) => round(median(results.map(pick)), 3);
  return {
    benchmark: 'fleet',
    fleet: results[0]!.fleet,
    runs: results.length,
    /** Each figure's median over the runs (every run starts a fresh fleet: a round from empty, then a warm one). */
    median: {
      throughputVsFloor: medianOf((r) => r.throughputVsFloor),
      fromEmptyThroughputVsFloor: medianOf((r) => r.fromEmptyThroughputVsFloor),
      throughputVsFloorBefore: medianOf((r) => r.throughputVsFloorBefore),
      throughputVsKeepAliveFloor: medianOf((r) => r.throughputVsKeepAliveFloor),
      convergeSeconds: medianOf((r) => r.convergeFromEmpty.seconds),
      warmConvergeSeconds: medianOf((r) => r.convergeWarm.seconds),
      floorCreatesPerSec: medianOf((r) => r.floor.best),
      warmHostStealShare: medianOf((r) => r.convergeWarm.hostSteal.share ?? Number.NaN),
      eventToAvailableP50Ms: medianOf((r) => r.eventToAvailableMs.p50),
      eventToAvailableP99Ms: medianOf((r) => r.eventToAvailableMs.p99),
    },
    results,
  };
}

async function convergeOnce(o: {
  clusters: number;
  pools: number;
  samples: number;
  functionThreads: number;
  clusterThreads: number | undefined;
}) {
  const { clusters, pools, samples, functionThreads, clusterThreads } = o;
  log(`starting ${clusters} empty clusters…`);
  return withBenchFleet(
    'fleet',
    { clusters, pools: 0, nodesPerPool: 0, functionThreads, clusterThreads },
    async (fleet) => {
      const changes = clusters * pools * 2;
      const entriesBefore = fleet.bus.stats().entriesAccepted;
      // The first round starts from empty clusters and threads whose code V8 has not yet compiled; the second
      // creates as many pools again in the same fleet, now warm, as the floor it is compared with is taken warm.
      const fromEmpty = await convergeRound(fleet, { clusters, pools, firstPool: 0, label: 'from empty' });
      const busEntries = fleet.bus.stats().entriesAccepted - entriesBefore;
      const warm = await convergeRound(fleet, { clusters, pools, firstPool: pools, label: 'warm' });

      log(`measuring event-to-Available latency over ${samples} new pools…`);
      const latencies: number[] = [];
      const c = fleet.clusters[0];
      const api = RawObjectApi.fromKubeConfig(c.kubeConfig);
      for (let i = 0; i < samples; i++) {
        const name = `latency-${i}`;
        await createIfMissing(api, edgeNode(`${name}-node`, name));
        const watcher = whenAvailable(c, name);
        const start = performance.now();
        await createIfMissing(api, nodePool(name, 'Edge'));
        latencies.push((await watcher.ready) - start);
        watcher.stop();
      }

      return {
        fleet: {
          clusters,
          poolsPerCluster: pools,
          pools: clusters * pools,
          kubelet: 'sim',
          readyDelayMs: 0,
          functionThreads,
          /** Where the clusters' API servers, kubelets and forwarders ran: worker threads, or the main thread. */
          mode: fleet.clusterThreads > 0 ? 'threads' : 'main thread',
          clusterThreads: fleet.clusterThreads,
        },
        /** `clusters × pools` new pools in empty clusters, in threads that have just started. */
        convergeFromEmpty: fromEmpty,
        /** As many new pools again in the same fleet once it has converged the first round: warm. */
        convergeWarm: warm,
        eventToAvailableMs: { p50: round(median(latencies), 1), p99: round(percentile(latencies, 99), 1), samples },
        eventsPerChange: round(busEntries / changes, 2),
      };
    },
  );
}

/** Creates `clusters × pools` new pools (`firstPool` on) and measures what converging them took. */
async function convergeRound(
  fleet: LocalFleet,
  o: { clusters: number; pools: number; firstPool: number; label: string },
) {
  const { clusters, pools, firstPool, label } = o;
  const total = clusters * pools;
  const writesBefore = sum(await apiWritesPerCluster(fleet));
  const deadLettersBefore = (await fleet.progress()).deadLetters;
  const reconcilesBefore = fleet.reconcile.stats.invocations;
  const requestMarks = await Promise.all(fleet.clusters.map((c) => localApiOf(c).requestLog.mark()));
  const tableBefore = fleet.dynamo.usage().byOperation;
  log(`${label}: creating ${clusters} × ${pools} pools (1 node each)…`);
  const steal = await stealMeter();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const threads0 = await fleet.threadCpu();
  await createEdgePools(fleet, pools, firstPool);
  const converged = await fleet.waitConverged(30 * 60_000, (p) => {
    const a = p.clusters.reduce((n, c) => n + c.available, 0) - firstPool * clusters;
    log(`${label}: ${a}/${total} Available after ${round((performance.now() - t0) / 1000, 1)} s`);
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const threads1 = await fleet.threadCpu();
  const hostSteal = await steal.stop(seconds);
  const used = (now: number[], then: number[]) => now.map((n, i) => round(n - (then[i] ?? 0), 1));
  const writes = sum(await apiWritesPerCluster(fleet)) - writesBefore;
  const reconcilerRequests = await reconcilerRequestsPerPool(fleet, requestMarks, total);
  const tableRequests = Object.fromEntries(
    Object.entries(fleet.dynamo.usage().byOperation).map(([op, u]) => [
      op,
      round((u.requests - (tableBefore[op]?.requests ?? 0)) / total, 2),
    ]),
  );
  return {
    seconds: round(seconds, 2),
    poolsPerSec: round(total / seconds, 1),
    apiWrites: writes,
    apiWritesPerSec: round(writes / seconds, 1),
    writesPerPool: round(writes / total, 2),
    reconciles: fleet.reconcile.stats.invocations - reconcilesBefore,
    /** What converging one pool asked of its cluster's API (the reconciler's requests) and of the state table. */
    reconcilerRequestsPerPool: reconcilerRequests,
    tableRequestsPerPool: tableRequests,
    deadLetters: converged.deadLetters - deadLettersBefore,
    /** CPU time of the whole process (every thread) while converging, and how many cores that averages. */
    cpuSeconds: round(cpuSeconds, 1),
    cores: round(cpuSeconds / seconds, 2),
    /**
     * CPU time the host's hypervisor took from this machine while converging (Linux's steal time), and its share
     * of the machine's CPU time: the same code converges more slowly when the host takes more, and the floor
     * measured before and after need not have seen the same.
     */
    hostSteal,
    /**
     * CPU seconds per thread while converging: the main thread (bus, state table, the other functions, and
     * the clusters when they are not in threads), the cluster threads, the reconcile function's threads.
     * The rest of cpuSeconds is V8's platform threads (collector helpers, background compilation) and libuv's
     * pool.
     */
    cpuByThread: {
      main: round(threads1.main - threads0.main, 1),
      clusterThreads: used(threads1.clusterThreads, threads0.clusterThreads),
      functionThreads: used(threads1.functionThreads, threads0.functionThreads),
    },
  };
}

/** The reconciler's requests to the clusters' APIs since `marks`, per pool: in all, and by verb and resource. */
async function reconcilerRequestsPerPool(fleet: LocalFleet, marks: number[], pools: number) {
  const byRequest = new Map<string, number>();
  for (const [i, c] of fleet.clusters.entries()) {
    for (const r of await localApiOf(c).requestLog.since(marks[i])) {
      if (!r.userAgent.startsWith(RECONCILER_USER_AGENT)) continue;
      const key = `${r.verb} ${r.resource ?? r.path}${r.subresource ? `/${r.subresource}` : ''}`;
      byRequest.set(key, (byRequest.get(key) ?? 0) + 1);
    }
  }
  const perPool = (n: number) => round(n / pools, 2);
  const sorted = [...byRequest].sort((a, b) => b[1] - a[1]);
  return {
    total: perPool(sum(sorted.map(([, n]) => n))),
    byRequest: Object.fromEntries(sorted.map(([k, n]) => [k, perPool(n)])),
  };
}
