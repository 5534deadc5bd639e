/**
 * The soak: a local fleet (sim kubelet) under random operations and injected faults for a while, its
 * invariants checked every couple of seconds, then a quiet phase in which everything must converge.
 */
import { HttpMethod } from '@kubernetes/client-node';
import { readRollout } from '../../adapters/state-table/index.ts';
import { TERMINAL_PHASES } from '../../core/rollout/types.ts';
import { type LocalFleet, type LocalFleetOptions, localApiOf, startLocalFleet } from '../local/fleet/fleet.ts';
import { isReady, readCluster } from './cluster-view.ts';
import { BusChaos, FAULTS, RECONCILE_TIMEOUT_MS } from './faults.ts';
import { Invariants } from './invariants.ts';
import { OPERATIONS, runOperation } from './operations.ts';
import { buildReport, type SoakReport } from './report.ts';
import { TextTap } from './text-tap.ts';
import { type SoakOptions, SoakWorld } from './world.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CHECK_EVERY_MS = 2_000;
const OP_TIMEOUT_MS = 20_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(timer));
}

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const tap = new TextTap();
  const chaos = new BusChaos();
  const previousLogLevel = process.env.POWERTOOLS_LOG_LEVEL;
  // The functions' warnings too, not only errors: a secret logged at WARN is still a leak.
  process.env.POWERTOOLS_LOG_LEVEL = previousLogLevel ?? 'WARN';
  tap.captureProcessOutput(opts.showLogs ?? false);
  const fleetOptions: LocalFleetOptions = {
    clusters: opts.clusters,
    pools: opts.pools,
    nodesPerPool: opts.nodesPerPool,
    stateDir: opts.stateDir,
    store: opts.store,
    persist: opts.store === 'etcd',
    readyDelayMs: 50,
    retryBaseDelayMs: 100,
    reconcileTimeoutMs: RECONCILE_TIMEOUT_MS,
    functionThreads: 0,
    log: (line) => tap.add('fleet log', line),
    onBusActivity: (a) => {
      if (a.type === 'accepted') {
        chaos.onAccepted(a.event);
        tap.add('bus event', JSON.stringify(a.event));
      } else if (a.type === 'attempt-failed') tap.add('bus attempt error', a.error);
    },
  };
  const stats = {
    reconciles: 0,
    reconcileErrors: 0,
    reconcileRequeues: 0,
    reconcileTimeouts: 0,
    busDeadLetters: 0,
    stackRestarts: 0,
  };
  const addStats = (f: LocalFleet) => {
    stats.reconciles += f.reconcile.stats.invocations;
    stats.reconcileErrors += f.reconcile.stats.errors;
    stats.reconcileRequeues += f.reconcile.stats.requeues;
    stats.reconcileTimeouts += f.reconcile.stats.timeouts;
    stats.busDeadLetters += f.bus.deadLetters().length;
  };
  let fleet = await startLocalFleet(fleetOptions);
  try {
    await fleet.waitConverged(120_000);
    const w = new SoakWorld(fleet, opts);
    chaos.attach(w);
    const inv = new Invariants(w, tap);
    const deadline = w.startedAt + opts.minutes * 60_000;
    let restarting = false;
    let opInFlight: Promise<void> = Promise.resolve();
    let checkInFlight: Promise<unknown> = Promise.resolve();
    opts.progress(
      `soak: fleet of ${opts.clusters} × ${opts.pools} up, running ${opts.minutes} min with seed ${opts.seed}`,
    );

    const operationLoop = async () => {
      const kinds = Object.entries(OPERATIONS).map(([k, o]) => [k, o.weight] as const);
      // As the fault lanes do: every kind once, in a seeded order, then weighted draws, so a short soak on a
      // slow machine still runs them all (a rare kind drawn by weight alone could miss a 60 s run).
      const queue = w.rng.shuffle(kinds.map(([k]) => k));
      let lastTick = 0;
      while (Date.now() < deadline) {
        if (restarting) {
          await sleep(200);
          continue;
        }
        const kind = queue.shift() ?? w.rng.weighted(kinds);
        opInFlight = withTimeout(runOperation(w, kind), OP_TIMEOUT_MS, kind).catch(() => w.operations.add(kind, false));
        await opInFlight;
        if (w.rollouts.size && Date.now() - lastTick > 3_000 && !restarting) {
          lastTick = Date.now();
          opInFlight = tickRollouts(w);
          await opInFlight;
        }
        await sleep(w.rng.between(150, 700));
      }
    };

    const restartStack = async () => {
      restarting = true;
      try {
        await opInFlight;
        await checkInFlight;
        addStats(w.fleet);
        // A kill, not a shutdown: the bus's queued deliveries and pending retries are lost with the process
        // (a graceful stop would wait for every retry, a minute and more for an event that cannot succeed).
        await w.fleet.bus.stop();
        await w.fleet.stop();
        // A start that fails (a port or a data dir still held by the old stack) is tried again: a soak left
        // with a stopped fleet would only report that.
        for (let attempt = 1; ; attempt++) {
          try {
            fleet = await startLocalFleet(fleetOptions);
            break;
          } catch (err) {
            opts.progress(`soak: stack restart attempt ${attempt} failed: ${(err as Error).message}`);
            w.journal.add(`stack restart attempt ${attempt} failed: ${String((err as Error).message).slice(0, 200)}`);
            if (attempt >= 5) throw err;
            await sleep(1_000 * attempt);
          }
        }
        w.fleet = fleet;
        inv.busReplaced();
        stats.stackRestarts++;
      } finally {
        restarting = false;
      }
    };

    const faultLoop = async (lane: 'api' | 'delivery') => {
      const kinds = Object.entries(FAULTS).filter(([, f]) => f.lane === lane && (!f.needs || f.needs === opts.store));
      // Every kind once, in a seeded order, then weighted draws: a short soak still sees them all.
      const queue = w.rng.shuffle(kinds.map(([k]) => k));
      while (Date.now() < deadline - 5_000) {
        await sleep(w.rng.between(500, 2_500));
        const kind = queue.shift() ?? w.rng.weighted(kinds.map(([k, f]) => [k, f.weight] as const));
        await w
          .fault(kind, () => (kind === 'stack-restart' ? restartStack() : FAULTS[kind].run(w, chaos)))
          .catch((err) => {
            w.faults.add(`${kind} (could not be injected)`, false, err);
          });
      }
    };

    const checkLoop = async () => {
      let lastProgress = 0;
      while (Date.now() < deadline) {
        await sleep(CHECK_EVERY_MS);
        if (restarting) continue;
        const checked = inv.check();
        checkInFlight = checked.catch(() => undefined);
        const whole = await checked.catch((err) => {
          w.checks.errors = (w.checks.errors ?? 0) + 1;
          opts.progress(`soak: a check failed to run: ${(err as Error).message}`);
          return false;
        });
        if (whole) resolveRepairs(w);
        if (Date.now() - lastProgress > 10_000) {
          lastProgress = Date.now();
          const p = await w.fleet.progress();
          const ops = Object.values(w.operations.counts).reduce((s, c) => s + c.done + c.failed, 0);
          const faults = Object.values(w.faults.counts).reduce((s, c) => s + c.done, 0);
          opts.progress(
            `soak ${(w.elapsed() / 1000).toFixed(0)} s: ${ops} operations, ${faults} faults, available ${p.clusters.reduce((s, c) => s + c.available, 0)}/${p.clusters.reduce((s, c) => s + c.wanted, 0)}, violations ${w.violations.length}, rss ${inv.rss.lastMb} MB`,
          );
        }
      }
    };

    await Promise.all([operationLoop(), faultLoop('api'), faultLoop('delivery'), checkLoop()]);

    // Quiet phase: no more changes; what the soak left broken on purpose is put right, then everything
    // must converge and every invariant hold at once.
    opts.progress('soak: quiescing');
    await Promise.all(w.fleet.clusters.map((c) => localApiOf(c).setFaults({ rules: [] })));
    for (const id of [...w.rollouts])
      await w.fleet.rollout.invoke({ command: 'abort', rolloutId: id }).catch(() => undefined);
    w.rollouts.clear();
    for (const key of [...w.invalidSpec]) {
      const [clusterId, pool] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
      const c = w.fleet.clusters.find((x) => x.id === clusterId);
      if (c)
        await w
          .api(c)
          .requestJson(HttpMethod.PATCH, `/apis/poolspirit.io/v1alpha1/poolspirits/${pool}`, {
            body: { spec: { apiServer: { extraArgs: null } } },
            contentType: 'application/merge-patch+json',
          })
          .catch(() => undefined);
      w.invalidSpec.delete(key);
      w.touch(clusterId, pool);
    }
    // Nodes the soak made NotReady come back: their pods would otherwise wait out their toleration (120 s).
    for (const c of w.fleet.clusters) {
      for (const node of (await readCluster(localApiOf(c).storage)).nodes.filter((n) => !isReady(n))) {
        const conditions = [
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: new Date().toISOString() },
        ];
        await w
          .api(c)
          .requestJson(HttpMethod.PATCH, `/api/v1/nodes/${node.metadata.name}/status`, {
            body: { status: { conditions } },
            contentType: 'application/strategic-merge-patch+json',
          })
          .catch(() => undefined);
      }
    }
    const quietFrom = Date.now();
    let quiescedInMs: number | null = null;
    while (Date.now() - quietFrom < opts.quiesceMs) {
      if (await inv.check()) {
        quiescedInMs = Date.now() - quietFrom;
        resolveRepairs(w);
        break;
      }
      await sleep(1_000);
    }
    // Whole or not, one last pass reports whatever is still wrong, whatever its bound.
    await inv.check(true);
    addStats(w.fleet);
    return buildReport(w, {
      quiescedInMs,
      rss: inv.rss,
      scan: { scannedChars: tap.scannedChars, dropped: tap.dropped },
      stats,
    });
  } finally {
    await fleet.stop().catch(() => undefined);
    tap.stopCapture();
    if (previousLogLevel === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
  }
}

function resolveRepairs(w: SoakWorld): void {
  const now = Date.now();
  for (const p of w.pendingRepairs) {
    w.repairs[p.kind] ??= [];
    w.repairs[p.kind].push(now - p.endedAt);
  }
  w.pendingRepairs = [];
}

async function tickRollouts(w: SoakWorld): Promise<void> {
  for (const id of [...w.rollouts]) {
    try {
      await w.fleet.rollout.invoke({ command: 'tick', rolloutId: id });
      const state = await readRollout(w.fleet.table, id);
      if (!state || TERMINAL_PHASES.includes(state.phase)) {
        w.rollouts.delete(id);
        w.operations.add(`rollout-finished ${state?.phase ?? 'gone'}`);
      }
    } catch {
      w.operations.add('rollout-tick', false);
    }
  }
}
