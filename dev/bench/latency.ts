/**
 * Event → Available, and where the time goes: forwarder coalescing, bus delivery, queueing for the
 * function's concurrency, the function itself (and its applies), the kubelet, and the watch hops of the
 * local API. Two scenarios: single changes (a new pool at a time, on an idle fleet, once per coalescing
 * window compared) and a fleet rollout (every pool's spec changed in waves). The floor, measured in the same
 * run: how long the local API takes to deliver a write to a watcher (what the watch hops cannot go below).
 * `npm run bench -- latency [--samples 12] [--windows 200,50] [--clusters 10] [--pools 20] [--concurrency 20]`
 */
import * as os from 'node:os';
import { parseArgs } from 'node:util';
import { Watch } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../../adapters/kubernetes/client.ts';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { readRollout } from '../../adapters/state-table/rollout-state.ts';
import { intFlag, UsageError } from '../../cli/command.ts';
import { TERMINAL_PHASES } from '../../core/rollout/types.ts';
import { ROLLOUT_FIELD_MANAGER } from '../../functions/rollout/field-manager.ts';
import type { BusActivity } from '../local/bus/index.ts';
import { type FleetCluster, type LocalFleet, localApiOf } from '../local/fleet/fleet.ts';
import { createIfMissing, edgeNode, nodePool } from '../local/fleet/seed.ts';
import type { RequestRecord } from '../local/kube-api/index.ts';
import { withBenchFleet } from './lib/bench-fleet.ts';
import { median, percentile, round } from './lib/stats.ts';

const log = (line: string) => process.stderr.write(`[latency] ${line}\n`);
const epoch = () => performance.timeOrigin + performance.now();

interface Notice {
  clusterId: string;
  kind: string;
  poolName?: string;
  observedAt: number;
  acceptedAt: number;
}
interface Invocation {
  id: string;
  calledAt: number;
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

/** Everything timed while a fleet runs: accepted change notices and reconcile invocations, by event id. */
class Timeline {
  readonly notices = new Map<string, Notice>();
  readonly invocations: Invocation[] = [];
  onBus = (a: BusActivity) => {
    if (a.type !== 'accepted' || a.event.source !== 'pool-spirit.forwarder') return;
    const d = a.event.detail as { clusterId: string; kind: string; poolName?: string; observedAt: string };
    this.notices.set(a.event.id, {
      clusterId: d.clusterId,
      kind: d.kind,
      poolName: d.poolName,
      observedAt: Date.parse(d.observedAt),
      acceptedAt: epoch(),
    });
  };
  watch(fleet: LocalFleet) {
    return fleet.reconcile.observe((t) => {
      const id = (t.event as { id?: unknown } | null)?.id;
      if (typeof id === 'string')
        this.invocations.push({ id, calledAt: t.calledAt, startedAt: t.startedAt, endedAt: t.endedAt, ok: t.ok });
    });
  }
  /** This pool's reconciles (with the notice that started each) between two instants. */
  reconciles(clusterId: string, pool: string, from: number, to: number) {
    return this.invocations
      .map((inv) => ({ inv, notice: this.notices.get(inv.id) }))
      .filter(
        (x): x is { inv: Invocation; notice: Notice } =>
          !!x.notice &&
          x.notice.clusterId === clusterId &&
          x.notice.poolName === pool &&
          x.inv.startedAt >= from &&
          x.inv.endedAt <= to + 1,
      );
  }
}

const SEGMENTS = [
  'forwarderCoalescing',
  'busDelivery',
  'queueing',
  'function',
  'kubelet',
  'watchHops',
  'overlapOrOther',
] as const;
type Segment = (typeof SEGMENTS)[number];

/**
 * The critical path of one change: the first reconcile after it and the reconcile that made the pool
 * Available (often several notices apart). Each hop: notice observed by the forwarder → accepted by the bus
 * (coalescing) → handed to the function (bus delivery) → started (queueing for a concurrency slot) → ended
 * (the function, its applies within). Between the hops the kubelet places the pod and makes it Ready
 * (the reconciler's Deployment write to the pod's Ready status write). The watch hops: the change reaching
 * the forwarder, the Available status reaching the watcher. What is left (negative when hops overlap) is
 * `overlapOrOther`, so the parts add up to the total.
 */
function breakdown(tl: Timeline, clusterId: string, requests: RequestRecord[], pool: string, t0: number, tEnd: number) {
  const rs = tl
    .reconciles(clusterId, pool, t0, tEnd)
    .filter((r) => r.inv.ok && r.notice.observedAt >= t0 - 2)
    .sort((a, b) => a.inv.startedAt - b.inv.startedAt);
  if (!rs.length) return undefined;
  const first = rs[0];
  const last = rs.reduce((a, b) => (b.inv.endedAt > a.inv.endedAt ? b : a));
  const hops = last === first ? [first] : [first, last];
  const sum = (f: (r: typeof first) => number) => hops.reduce((n, r) => n + f(r), 0);
  const log = requests.filter((w) => w.at >= t0 - 2 && w.at <= tEnd + 1);
  const deploymentAt = log.find(
    (w) => w.resource === 'deployments' && w.fieldManager === FIELD_MANAGER && w.name?.includes(pool),
  )?.at;
  const podReadyAt = log.find(
    (w) =>
      w.resource === 'pods' &&
      w.subresource === 'status' &&
      w.name?.includes(pool) &&
      (deploymentAt === undefined || w.at >= deploymentAt),
  )?.at;
  const parts: Record<Segment, number> = {
    forwarderCoalescing: sum((r) => r.notice.acceptedAt - r.notice.observedAt),
    busDelivery: sum((r) => r.inv.calledAt - r.notice.acceptedAt),
    queueing: sum((r) => r.inv.startedAt - r.inv.calledAt),
    function: sum((r) => r.inv.endedAt - r.inv.startedAt),
    kubelet: deploymentAt !== undefined && podReadyAt !== undefined ? podReadyAt - deploymentAt : 0,
    watchHops: first.notice.observedAt - t0 + (tEnd - last.inv.endedAt),
    overlapOrOther: 0,
  };
  const total = tEnd - t0;
  parts.overlapOrOther = total - SEGMENTS.reduce((n, k) => n + parts[k], 0);
  // The reconciler's writes within the hops' invocations: how much of the function's time its applies span.
  const applies = (r: typeof first) =>
    log
      .filter((w) => w.fieldManager === FIELD_MANAGER && w.at >= r.inv.startedAt - 1 && w.at <= r.inv.endedAt + 1)
      .map((w) => w.at);
  const span = (ats: number[]) => (ats.length ? Math.max(...ats) - Math.min(...ats) : 0);
  return { total, parts, reconciles: rs.length, appliesSpanMs: sum((r) => span(applies(r))) };
}

function summarize(samples: NonNullable<ReturnType<typeof breakdown>>[]) {
  const pct = (xs: number[]) => ({ p50: round(median(xs), 1), p99: round(percentile(xs, 99), 1) });
  return {
    samples: samples.length,
    total: pct(samples.map((s) => s.total)),
    parts: Object.fromEntries(SEGMENTS.map((k) => [k, pct(samples.map((s) => s.parts[k]))])) as Record<
      Segment,
      { p50: number; p99: number }
    >,
    appliesSpan: pct(samples.map((s) => s.appliesSpanMs)),
    reconcilesPerChange: pct(samples.map((s) => s.reconciles)),
    /** Share of the median total each part's median is (they need not add up to 1). */
    shareOfMedian: Object.fromEntries(
      SEGMENTS.map((k) => [
        k,
        round(median(samples.map((s) => s.parts[k])) / Math.max(1e-9, median(samples.map((s) => s.total))), 2),
      ]),
    ),
  };
}

/** Waits until the forwarders hold nothing and the bus and the reconcile function are idle. */
async function waitQuiet(fleet: LocalFleet): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await fleet.bus.drain();
    const senders = (await Promise.all(fleet.clusters.map((c) => c.forwarder.stats()))).map((s) => s.sender);
    const busy = senders.some((s) => s.pendingKeys > 0 || s.inFlightEntries > 0) || fleet.reconcile.stats.running > 0;
    if (!busy) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function available(obj: any): boolean {
  return (obj?.status?.conditions ?? []).some((c: any) => c.type === 'Available' && c.status === 'True');
}

/** Calls `onChange` with every PoolSpirit of the cluster as it changes (one watch, no polling). */
async function watchPoolSpirits(c: FleetCluster, onChange: (obj: any, at: number) => void): Promise<() => void> {
  const ac = await new Watch(c.kubeConfig).watch(
    '/apis/poolspirit.io/v1alpha1/poolspirits',
    {},
    (_t, obj) => onChange(obj, epoch()),
    () => undefined,
  );
  return () => ac.abort();
}

/** The floor: median time from a write to the local API until a watcher sees it. */
async function watchFloor(c: FleetCluster, n = 15): Promise<number> {
  const api = RawObjectApi.fromKubeConfig(c.kubeConfig);
  const seen = new Map<string, number>();
  const ac = await new Watch(c.kubeConfig).watch(
    '/api/v1/namespaces/default/configmaps',
    {},
    (_t, obj: any) => {
      if (!seen.has(obj.metadata.name)) seen.set(obj.metadata.name, epoch());
    },
    () => undefined,
  );
  const samples: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const name = `floor-${i}-${Date.now()}`;
      const t0 = epoch();
      await createIfMissing(api, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'default' },
        data: { a: 'b' },
      } as never);
      const deadline = Date.now() + 5_000;
      while (!seen.has(name) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      samples.push((seen.get(name) ?? NaN) - t0);
    }
  } finally {
    ac.abort();
  }
  return median(samples.filter(Number.isFinite));
}

async function singleChanges(windowMs: number, samples: number, concurrency: number) {
  const tl = new Timeline();
  return withBenchFleet(
    `latency-${windowMs}`,
    {
      clusters: 1,
      pools: 2,
      nodesPerPool: 1,
      functionThreads: 1,
      reconcileConcurrency: concurrency,
      forwarderCoalesceWindowMs: windowMs,
      onBusActivity: tl.onBus,
    },
    async (fleet) => {
      const stop = tl.watch(fleet);
      await fleet.waitConverged(5 * 60_000);
      const c = fleet.clusters[0];
      const floorMs = await watchFloor(c);
      const api = RawObjectApi.fromKubeConfig(c.kubeConfig);
      const results: NonNullable<ReturnType<typeof breakdown>>[] = [];
      for (let i = 0; i < samples; i++) {
        const pool = `lat-${windowMs}-${i}`;
        await createIfMissing(api, edgeNode(`${pool}-node`, pool));
        // The node's own notice (and its reconcile) settle first: t0 is the NodePool alone.
        await waitQuiet(fleet);
        let resolveAt: (t: number) => void = () => undefined;
        const done = new Promise<number>((r) => (resolveAt = r));
        const unwatch = await watchPoolSpirits(c, (obj, at) => {
          if (obj?.metadata?.name === pool && available(obj)) resolveAt(at);
        });
        const t0 = epoch();
        await createIfMissing(api, nodePool(pool, 'Edge'));
        const tEnd = await done;
        unwatch();
        await fleet.bus.drain();
        const b = breakdown(tl, c.id, await localApiOf(c).requestLog.since(0), pool, t0, tEnd);
        if (b) results.push(b);
      }
      stop();
      const { sender } = await c.forwarder.stats();
      return {
        coalesceWindowMs: windowMs,
        floor: { writeToWatcherMs: round(floorMs, 1) },
        ...summarize(results),
        forwarder: { received: sender.received, coalesced: sender.coalesced, sent: sender.sent },
      };
    },
  );
}

async function rollout(clusters: number, pools: number, windowMs: number, concurrency: number) {
  const tl = new Timeline();
  return withBenchFleet(
    'latency-rollout',
    {
      clusters,
      pools,
      nodesPerPool: 1,
      functionThreads: 1,
      reconcileConcurrency: concurrency,
      forwarderCoalesceWindowMs: windowMs,
      onBusActivity: tl.onBus,
    },
    async (fleet) => {
      const t0 = epoch();
      await fleet.waitConverged(30 * 60_000);
      log(`${clusters} × ${pools} converged in ${round((epoch() - t0) / 1000, 1)} s; rolling out agent 0.2.0…`);
      const stop = tl.watch(fleet);
      // When each PoolSpirit is Available again on the new version (its status caught up with its spec).
      const rolled = new Map<string, number>();
      const unwatch = await Promise.all(
        fleet.clusters.map((c) =>
          watchPoolSpirits(c, (obj, at) => {
            const key = `${c.id}/${obj?.metadata?.name}`;
            if (
              !rolled.has(key) &&
              obj?.spec?.agent?.version === '0.2.0' &&
              available(obj) &&
              (obj?.status?.observedGeneration ?? 0) >= (obj?.metadata?.generation ?? 1)
            )
              rolled.set(key, at);
          }),
        ),
      );
      const marks = await Promise.all(fleet.clusters.map((c) => localApiOf(c).requestLog.mark()));
      const started = epoch();
      const id = `latency-${Date.now()}`;
      await fleet.rollout.invoke({
        command: 'start',
        rollout: {
          id,
          patch: { agent: { version: '0.2.0' } },
          progressDeadline: '30m',
          canary: 1,
          maxConcurrency: '25%',
          soak: '1s',
          autoRollback: false,
        },
      });
      let phase = '';
      for (;;) {
        const state = await readRollout(fleet.table, id);
        phase = state?.phase ?? '';
        if (state && TERMINAL_PHASES.includes(state.phase)) break;
        if (epoch() - started > 30 * 60_000) throw new Error(`rollout still ${phase} after 30 minutes`);
        await new Promise((r) => setTimeout(r, 500));
        await fleet.rollout.invoke({ command: 'tick', rolloutId: id });
      }
      await fleet.waitConverged(10 * 60_000);
      await fleet.bus.drain();
      for (const u of unwatch) u();
      stop();
      const results: NonNullable<ReturnType<typeof breakdown>>[] = [];
      for (const [i, c] of fleet.clusters.entries()) {
        const api = localApiOf(c).requestLog;
        const requests = await api.since(0);
        // t0 of each pool: the rollout's apply of its spec (the change the forwarder then notices).
        for (const w of await api.writesSince(marks[i], {
          fieldManager: ROLLOUT_FIELD_MANAGER,
          resource: 'poolspirits',
        })) {
          const tEnd = rolled.get(`${c.id}/${w.name}`);
          if (!w.name || tEnd === undefined || tEnd < w.at) continue;
          const b = breakdown(tl, c.id, requests, w.name, w.at, tEnd);
          if (b) results.push(b);
        }
      }
      const senders = (await Promise.all(fleet.clusters.map((c) => c.forwarder.stats()))).map((s) => s.sender);
      return {
        fleet: {
          clusters,
          poolsPerCluster: pools,
          pools: clusters * pools,
          reconcileConcurrency: concurrency,
          coalesceWindowMs: windowMs,
        },
        phase,
        seconds: round((epoch() - started) / 1000, 1),
        reconcile: { invocations: fleet.reconcile.stats.invocations, maxRunning: fleet.reconcile.stats.maxRunning },
        ...summarize(results),
        forwarder: {
          received: senders.reduce((n, s) => n + s.received, 0),
          coalesced: senders.reduce((n, s) => n + s.coalesced, 0),
          sent: senders.reduce((n, s) => n + s.sent, 0),
        },
      };
    },
  );
}

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      samples: { type: 'string', default: '12' },
      windows: { type: 'string', default: '200,50' },
      clusters: { type: 'string', default: '10' },
      pools: { type: 'string', default: '20' },
      concurrency: { type: 'string', default: '20' },
      'rollout-window': { type: 'string' },
      'skip-rollout': { type: 'boolean' },
    },
  });
  const samples = intFlag('samples', values.samples, 3, 200);
  const windows = String(values.windows)
    .split(',')
    .map((w) => intFlag('windows', w, 0, 5_000));
  if (!windows.length) throw new UsageError('--windows: expected one or more windows in ms, e.g. 200,50');
  const clusters = intFlag('clusters', values.clusters, 1, 50);
  const pools = intFlag('pools', values.pools, 1, 200);
  const concurrency = intFlag('concurrency', values.concurrency, 1, 200);
  const loadBefore = os.loadavg().map((x) => round(x, 2));
  const single: unknown[] = [];
  for (const w of windows) {
    log(`single changes, coalescing window ${w} ms: ${samples} new pools one at a time…`);
    single.push(await singleChanges(w, samples, concurrency));
  }
  const rolloutWindow =
    values['rollout-window'] !== undefined
      ? intFlag('rollout-window', values['rollout-window'], 0, 5_000)
      : windows[windows.length - 1];
  const rolloutResult = values['skip-rollout'] ? null : await rollout(clusters, pools, rolloutWindow, concurrency);
  return {
    benchmark: 'latency',
    loadAverage: { before: loadBefore, after: os.loadavg().map((x) => round(x, 2)) },
    singleChange: single,
    rollout: rolloutResult,
  };
}
