/**
 * The capacity probe: does an in-memory etcd behind a pool-spirit apiserver hold 500 Nodes + 1,000 Pods,
 * stay bounded under a patch storm, and elect YurtHub leaders correctly? (The product's capacity and leader-election targets: docs/probes.md.)
 *
 * `local`: two real pool-spirits (the rendered pod on the built etcd + kube-apiserver, pool-spirit-target.ts),
 * one with the product's flags, one with upstream's etcd flags and no kube-apiserver memory flags, so
 * memory and the patch storms compare side by side. `kubeconfig`: any apiserver, once, with what it lets us see.
 *
 * Order per product stack: idle → write → delete → compact + defragment (what deleting frees, and when)
 * → write again → leader election → patch storm (last: a storm can leave etcd refusing writes).
 */

import { performance } from 'node:perf_hooks';
import type { LeaderElectionConfig } from '../../core/leader/index.ts';
import {
  scaleLeaderElection,
  validateLeaderElectionConfig,
  YURTHUB_LEADER_ELECTION,
  YURTHUB_LEASE,
} from '../../core/leader/index.ts';
import { type ElectionResult, runElection } from './election.ts';
import type { EtcdObserver, EtcdSnapshot } from './etcd-observer.ts';
import { localEtcdObserver, metricsEtcdObserver, unavailableEtcdObserver } from './etcd-observer.ts';
import { diffFromLaunchPreset, type EtcdSettings, productEtcdSettings, upstreamEtcdSettings } from './etcd-settings.ts';
import type { KubeHttp } from './kube-http.ts';
import { kubeHttpForKubeconfig } from './kube-http.ts';
import {
  deleteObjects,
  type LoadShape,
  type PhaseFigures,
  probePaths,
  removeLeftovers,
  type WriteFigures,
  writeObjects,
} from './load.ts';
import { PROBE_NAMESPACE } from './objects.ts';
import { type MemoryPeaks, memoryFlagsOf, memoryPeaks } from './peaks.ts';
import type { PoolSpiritTarget, StartPoolSpiritTarget } from './pool-spirit-target.ts';
import { patchStorm, type StormResult } from './storm.ts';

/** `local` carries the starter of the rendered pool-spirit (dev/local/capacity/pool-spirit-target.ts in the CLI). */
export type ProbeTarget =
  | { kind: 'local'; start: StartPoolSpiritTarget }
  | { kind: 'kubeconfig'; file: string; context?: string; etcdMetricsUrl?: string };

export interface CapacityProbeOptions {
  target: ProbeTarget;
  nodes: number;
  pods: number;
  objectBytes: number;
  /** Concurrent writers in the load phases. */
  concurrency: number;
  contenders: number;
  /** Leader kills (alternating crash and hang). */
  kills: number;
  patchStormSeconds: number;
  stormConcurrency: number;
  /** Leader-election durations are divided by this. */
  timeScale: number;
  sampleIntervalMs: number;
  maintenanceIntervalMs: number;
  /** Allowed growth of the storm's last third over its middle third (0.1 = 10 %). */
  tolerance: number;
  /**
   * etcd flags (without `--`) laid over the rendered product settings of the local product stack: to
   * measure a candidate default before changing it (reported as `etcdSettings.productOverrides`).
   */
  productEtcdOverrides?: Record<string, string>;
  /** kube-apiserver flags laid over the product's rendered ones (local only): a lever measured before it is rendered. */
  productApiServerFlags?: Record<string, string>;
  /** Environment variables added to the product side's containers, by container name (local only), e.g. GOMEMLIMIT. */
  productContainerEnv?: Record<string, Record<string, string>>;
  /** Local: also run the upstream side (default true). A pod on a real node runs the product side only. */
  compareUpstream?: boolean;
  /** Seconds the pool-spirit is left alone before the load, to measure its idle CPU (a pod on a node only). */
  idleSeconds?: number;
  /** The Lease contenders elect over; a remote target gets its own so a real pool's election is not disturbed. */
  lease?: { namespace: string; name: string };
  /** Also log the pool-spirit's process lifecycle and arg translations (local only). */
  verbose?: boolean;
  log?: (line: string) => void;
}

export const DEFAULT_CAPACITY_OPTIONS: Omit<CapacityProbeOptions, 'target'> = {
  nodes: 500,
  pods: 1000,
  objectBytes: 8192,
  concurrency: 16,
  contenders: 500,
  kills: 10,
  patchStormSeconds: 120,
  stormConcurrency: 16,
  timeScale: 1,
  sampleIntervalMs: 1000,
  maintenanceIntervalMs: 5000,
  tolerance: 0.1,
  idleSeconds: 30,
};

/** Lease a remote probe elects over: never YurtHub's own, which a live pool is using. */
export const REMOTE_PROBE_LEASE = { namespace: 'kube-system', name: 'yurthub-capacity-probe' } as const;

export interface EtcdFigures {
  before: EtcdSnapshot;
  afterWrite: EtcdSnapshot;
  afterDelete: EtcdSnapshot;
  /** After compacting to the current revision and defragmenting (local only). */
  afterCompactAndDefrag: EtcdSnapshot | null;
}

export interface StormSide {
  settings: EtcdSettings;
  write: WriteFigures;
  storm: StormResult;
}

export interface CapacityProbeReport {
  kind: 'CapacityProbeReport';
  version: 1;
  startedAt: string;
  finishedAt: string;
  durationSeconds: number;
  target: {
    kind: ProbeTarget['kind'];
    server: string;
    etcdFiguresFrom: EtcdObserver['source'];
    /** Local: processes, or a pod on a real node (then `pod` holds its cgroup figures). */
    runsOn?: NonNullable<PoolSpiritTarget['runsOn']>;
  };
  parameters: Omit<CapacityProbeOptions, 'target' | 'log' | 'lease' | 'verbose'> & {
    leaderElection: { unscaled: LeaderElectionConfig; asRun: LeaderElectionConfig };
  };
  etcdSettings: {
    product: Record<string, string>;
    /** Flags of `product` that were overridden for this run (not the rendered defaults). */
    productOverrides: Record<string, string>;
    upstream: Record<string, string>;
    /** Where dev/local/etcd's launch preset differs from what a pool-spirit is rendered with. */
    launchPresetDiffers: Array<{ flag: string; rendered: string; launchPreset: string | undefined }>;
  };
  /** The kube-apiserver memory flags each local side ran with (`--name=value`, as rendered). */
  apiServerFlags: { product: string[]; upstream: string[] };
  load: { write: WriteFigures; delete: PhaseFigures; etcd: EtcdFigures };
  /** A pod on a real node: its idle CPU and memory as its cgroups account them, before any load. */
  pod: { idle: IdleFigures } | null;
  /** Local only: the highest figure of every snapshot and storm sample, per side (what a memory limit must hold). */
  memory: { product: MemoryPeaks | null; upstream: MemoryPeaks | null };
  patchStorm: { product: StormSide | null; upstream: StormSide | null; target: StormSide | null };
  leaderElection: ElectionResult;
  verdict: {
    memory: 'bounded' | 'growing' | 'unknown';
    upstreamMemory: 'bounded' | 'growing' | 'unknown' | null;
    firstLeaderWithinRetryPeriod: boolean;
    failoverWithinLeasePlusTwoRetries: boolean;
    zeroOverlaps: boolean;
    /** Every target met (upstream growing is expected and does not fail the probe). */
    pass: boolean;
  };
}

export function validateOptions(o: CapacityProbeOptions): CapacityProbeOptions {
  const int = (name: string, v: number, min: number, max: number) => {
    if (!Number.isInteger(v) || v < min || v > max)
      throw new TypeError(`${name}: expected a whole number from ${min} to ${max}, got ${v}`);
  };
  int('nodes', o.nodes, 1, 100_000);
  int('pods', o.pods, 0, 100_000);
  int('objectBytes', o.objectBytes, 512, 1_000_000);
  int('concurrency', o.concurrency, 1, 1024);
  int('contenders', o.contenders, 1, 10_000);
  int('kills', o.kills, 0, 1000);
  int('stormConcurrency', o.stormConcurrency, 1, 1024);
  if (!(o.patchStormSeconds > 0))
    throw new TypeError(`patchStormSeconds: expected a positive number of seconds, got ${o.patchStormSeconds}`);
  if (!(o.timeScale > 0 && o.timeScale <= 1000))
    throw new TypeError(`timeScale: expected a number above 0 and at most 1000, got ${o.timeScale}`);
  if (!(o.sampleIntervalMs >= 50))
    throw new TypeError(`sampleIntervalMs: expected at least 50, got ${o.sampleIntervalMs}`);
  if (!(o.maintenanceIntervalMs >= 50))
    throw new TypeError(`maintenanceIntervalMs: expected at least 50, got ${o.maintenanceIntervalMs}`);
  if (!(o.tolerance >= 0 && o.tolerance <= 10))
    throw new TypeError(`tolerance: expected a fraction such as 0.1, got ${o.tolerance}`);
  for (const [flag, value] of Object.entries(o.productEtcdOverrides ?? {})) {
    if (!/^[a-z][a-z0-9-]*$/.test(flag))
      throw new TypeError(`productEtcdOverrides: "${flag}" is not an etcd flag name (lowercase, without --)`);
    if (typeof value !== 'string' || value === '')
      throw new TypeError(`productEtcdOverrides.${flag}: expected a non-empty string value`);
  }
  if (o.idleSeconds !== undefined && !(o.idleSeconds >= 0 && o.idleSeconds <= 3600))
    throw new TypeError(`idleSeconds: expected 0 to 3600 seconds, got ${o.idleSeconds}`);
  const levers = { ...o.productApiServerFlags, ...o.productContainerEnv };
  if (Object.keys(levers).length && o.target.kind !== 'local')
    throw new TypeError('productApiServerFlags, productContainerEnv: only a local target starts the pool-spirit');
  if (o.productEtcdOverrides && Object.keys(o.productEtcdOverrides).length && o.target.kind !== 'local') {
    throw new TypeError('productEtcdOverrides: only a local target starts etcd; a remote one runs with its own flags');
  }
  return o;
}

export async function runCapacityProbe(options: CapacityProbeOptions): Promise<CapacityProbeReport> {
  const o = validateOptions(options);
  const log = o.log ?? (() => undefined);
  const started = new Date();
  const shape: LoadShape = { nodes: o.nodes, pods: o.pods, objectBytes: o.objectBytes, concurrency: o.concurrency };
  const election = validateLeaderElectionConfig(scaleLeaderElection(YURTHUB_LEADER_ELECTION, o.timeScale));
  const overrides = o.productEtcdOverrides ?? {};
  const rendered = productEtcdSettings();
  const product: EtcdSettings = { ...rendered, flags: { ...rendered.flags, ...overrides } };
  const upstream = upstreamEtcdSettings();
  const electionOptions = (lease: { namespace: string; name: string }) => ({
    contenders: o.contenders,
    config: election,
    timeScale: o.timeScale,
    kills: o.kills,
    lease,
    log,
  });
  const stormOptions = (observer: EtcdObserver, settings: EtcdSettings, paths: string[]) => ({
    seconds: o.patchStormSeconds,
    concurrency: o.stormConcurrency,
    paths,
    sampleIntervalMs: o.sampleIntervalMs,
    maintenanceIntervalMs: o.maintenanceIntervalMs,
    observer,
    limitBytes: settings.memoryLimitBytes,
    tolerance: o.tolerance,
    warmupUpdates: raftWarmupUpdates(settings.flags),
  });
  const maxSockets = Math.max(o.concurrency, o.stormConcurrency, Math.min(o.contenders, 512));

  let server = '';
  let source: EtcdObserver['source'] = 'unavailable';
  let load: CapacityProbeReport['load'] | undefined;
  let leaderElection: ElectionResult | undefined;
  let runsOn: CapacityProbeReport['target']['runsOn'];
  let pod: CapacityProbeReport['pod'] = null;
  const storms: CapacityProbeReport['patchStorm'] = { product: null, upstream: null, target: null };
  const memory: CapacityProbeReport['memory'] = { product: null, upstream: null };
  const apiServerFlags: CapacityProbeReport['apiServerFlags'] = { product: [], upstream: [] };

  if (o.target.kind === 'local') {
    log("local: starting the rendered pool-spirit with the product's etcd and kube-apiserver flags");
    const stack = await o.target.start({
      etcd: product,
      apiServer: 'product',
      ...(o.productApiServerFlags ? { apiServerFlags: o.productApiServerFlags } : {}),
      ...(o.productContainerEnv ? { containerEnv: o.productContainerEnv } : {}),
      log: o.verbose ? log : undefined,
      http: { maxSockets },
    });
    try {
      const observer = localEtcdObserver(stack.etcd, stack.apiServerPid, stack.pod);
      server = stack.api.server;
      source = observer.source;
      runsOn = stack.runsOn ?? { kind: 'processes' };
      apiServerFlags.product = memoryFlagsOf(stack.args.apiServer);
      if (stack.pod && (o.idleSeconds ?? 0) > 0) {
        log(`idle for ${o.idleSeconds} s: the pod's CPU and memory before any load`);
        pod = { idle: await measureIdle(observer, o.idleSeconds ?? 0) };
      }
      ({ load } = await loadPhases(stack.api, observer, shape, log));
      log('rewriting the objects for the election and the storm');
      const write = await writeObjects(stack.api, shape);
      leaderElection = await runElection(stack.api, electionOptions(o.lease ?? YURTHUB_LEASE));
      log(`patch storm (product settings) for ${o.patchStormSeconds} s`);
      const storm = await patchStorm(stack.api, stormOptions(observer, product, probePaths(shape)));
      storms.product = { settings: product, write, storm };
      memory.product = memoryPeaks([...Object.values(load.etcd), ...storm.samples, await observer.snapshot()]);
      log(`product storm: ${storm.verdict.verdict} (${storm.verdict.reason})`);
    } finally {
      await stack.stop();
    }
  }
  if (o.target.kind === 'local' && (o.compareUpstream ?? true)) {
    log('local: the same pool-spirit with upstream etcd flags and no kube-apiserver memory flags');
    const up = await o.target.start({
      etcd: upstream,
      apiServer: 'upstream',
      log: o.verbose ? log : undefined,
      http: { maxSockets },
    });
    try {
      const observer = localEtcdObserver(up.etcd, up.apiServerPid);
      apiServerFlags.upstream = memoryFlagsOf(up.args.apiServer);
      const idle = await observer.snapshot();
      const write = await writeObjects(up.api, shape);
      const written = await observer.snapshot();
      log(`patch storm (upstream settings) for ${o.patchStormSeconds} s`);
      const storm = await patchStorm(up.api, stormOptions(observer, upstream, probePaths(shape)));
      storms.upstream = { settings: upstream, write, storm };
      memory.upstream = memoryPeaks([idle, written, ...storm.samples, await observer.snapshot()]);
      log(`upstream storm: ${storm.verdict.verdict} (${storm.verdict.reason})`);
    } finally {
      await up.stop();
    }
  }
  if (o.target.kind === 'kubeconfig') {
    const api = await kubeHttpForKubeconfig(o.target.file, { context: o.target.context, maxSockets });
    try {
      const observer = o.target.etcdMetricsUrl
        ? metricsEtcdObserver(o.target.etcdMetricsUrl)
        : unavailableEtcdObserver();
      server = api.server;
      source = observer.source;
      const removed = await removeLeftovers(api, o.concurrency);
      if (removed) log(`removed ${removed} objects an earlier run left behind`);
      const before = await observer.snapshot();
      log(`writing ${o.nodes} Nodes and ${o.pods} Pods of ~${o.objectBytes} bytes`);
      const write = await writeObjects(api, shape);
      const afterWrite = await observer.snapshot();
      leaderElection = await runElection(api, electionOptions(o.lease ?? REMOTE_PROBE_LEASE));
      log(`patch storm for ${o.patchStormSeconds} s`);
      // The target's etcd flags are unknown: no warm-up allowance.
      const storm = await patchStorm(api, stormOptions(observer, { ...product, flags: {} }, probePaths(shape)));
      storms.target = { settings: { ...product, flags: {} }, write, storm };
      log('deleting everything');
      const del = await deleteObjects(api, shape);
      const lease = o.lease ?? REMOTE_PROBE_LEASE;
      await api.request('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${lease.namespace}/leases/${lease.name}`);
      await api.request('DELETE', `/api/v1/namespaces/${PROBE_NAMESPACE}`);
      load = {
        write,
        delete: del,
        etcd: { before, afterWrite, afterDelete: await observer.snapshot(), afterCompactAndDefrag: null },
      };
    } finally {
      api.close();
    }
  }

  const main = storms.product ?? storms.target;
  if (!main || !leaderElection || !load)
    throw new Error('capacity probe: no patch storm ran (neither on the product nor on the target)');
  const finished = new Date();
  const {
    log: _log,
    target: _target,
    lease: _lease,
    productEtcdOverrides: _overrides,
    productApiServerFlags: _apiServerFlags,
    productContainerEnv: _env,
    verbose: _verbose,
    ...parameters
  } = o;
  return {
    kind: 'CapacityProbeReport',
    version: 1,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationSeconds: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
    target: { kind: o.target.kind, server, etcdFiguresFrom: source, ...(runsOn ? { runsOn } : {}) },
    parameters: { ...parameters, leaderElection: { unscaled: YURTHUB_LEADER_ELECTION, asRun: election } },
    etcdSettings: {
      product: product.flags,
      productOverrides: overrides,
      upstream: upstream.flags,
      launchPresetDiffers: diffFromLaunchPreset(),
    },
    apiServerFlags,
    load,
    pod,
    patchStorm: storms,
    memory,
    leaderElection,
    verdict: {
      memory: main.storm.verdict.verdict,
      upstreamMemory: storms.upstream?.storm.verdict.verdict ?? null,
      firstLeaderWithinRetryPeriod: leaderElection.targets.firstLeaderWithinRetryPeriod,
      failoverWithinLeasePlusTwoRetries: leaderElection.targets.failoverWithinLeasePlusTwoRetries,
      zeroOverlaps: leaderElection.targets.zeroOverlaps,
      pass:
        main.storm.verdict.verdict === 'bounded' &&
        leaderElection.targets.firstLeaderWithinRetryPeriod &&
        leaderElection.targets.failoverWithinLeasePlusTwoRetries &&
        leaderElection.targets.zeroOverlaps,
    },
  };
}

export interface IdleFigures {
  seconds: number;
  /** CPU the whole pod used while idle, in millicores (1000 = one core). */
  cpuMillicores: number | null;
  /** The pod's working set at the end of the idle time (tmpfs included). */
  workingSetBytes: number | null;
  usageBytes: number | null;
  /** Per container: its working set at the end of the idle time, and its CPU over it (millicores). */
  containers: Record<string, { workingSetBytes: number; cpuMillicores: number | null }>;
}

/** Leaves the pool-spirit alone for `seconds` and reads what its cgroups charged meanwhile. */
async function measureIdle(observer: EtcdObserver, seconds: number): Promise<IdleFigures> {
  const first = await observer.snapshot();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const last = await observer.snapshot();
  const elapsed = (performance.now() - t0) / 1000;
  const millicores = (cpu0: number | null | undefined, cpu1: number | null | undefined) =>
    typeof cpu0 === 'number' && typeof cpu1 === 'number' ? Math.round(((cpu1 - cpu0) / elapsed) * 10_000) / 10 : null;
  return {
    seconds: Math.round(elapsed * 10) / 10,
    cpuMillicores: millicores(first.pod?.cpuSeconds, last.pod?.cpuSeconds),
    workingSetBytes: last.pod?.workingSetBytes ?? null,
    usageBytes: last.pod?.usageBytes ?? null,
    containers: Object.fromEntries(
      Object.entries(last.pod?.containers ?? {}).map(([n, c]) => [
        n,
        // A container restarted meanwhile has a new cgroup: its CPU over the idle time is not known.
        {
          workingSetBytes: c.workingSetBytes,
          cpuMillicores: millicores(first.pod?.containers[n]?.cpuSeconds, c.cpuSeconds),
        },
      ]),
    ),
  };
}

/** etcd 3.4's default snapshot-count and its fixed SnapshotCatchUpEntries. */
const ETCD_DEFAULT_SNAPSHOT_COUNT = 100_000;
const SNAPSHOT_CATCH_UP_ENTRIES = 5000;

/** Updates until the raft log held in memory is at its largest (0 when the flags are not known). */
function raftWarmupUpdates(flags: Record<string, string>): number {
  if (!Object.keys(flags).length) return 0;
  const count = Number(flags['snapshot-count'] ?? ETCD_DEFAULT_SNAPSHOT_COUNT);
  return (Number.isFinite(count) && count > 0 ? count : ETCD_DEFAULT_SNAPSHOT_COUNT) + SNAPSHOT_CATCH_UP_ENTRIES;
}

async function loadPhases(api: KubeHttp, observer: EtcdObserver, shape: LoadShape, log: (line: string) => void) {
  const before = await observer.snapshot();
  log(
    `writing ${shape.nodes} Nodes and ${shape.pods} Pods of ~${shape.objectBytes} bytes (concurrency ${shape.concurrency})`,
  );
  const write = await writeObjects(api, shape);
  const afterWrite = await observer.snapshot();
  log(`wrote ${write.requests} objects at ${write.perSecond}/s (p99 ${write.latencyMs.p99} ms); deleting everything`);
  const del = await deleteObjects(api, shape);
  const afterDelete = await observer.snapshot();
  let afterCompactAndDefrag: EtcdSnapshot | null = null;
  if (observer.compactAndDefragment) {
    await observer.compactAndDefragment();
    afterCompactAndDefrag = await observer.snapshot();
  }
  return { load: { write, delete: del, etcd: { before, afterWrite, afterDelete, afterCompactAndDefrag } } };
}
