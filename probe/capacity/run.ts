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
import type { StartPoolSpiritTarget } from './pool-spirit-target.ts';
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
  target: { kind: ProbeTarget['kind']; server: string; etcdFiguresFrom: EtcdObserver['source'] };
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

  let server: string;
  let source: EtcdObserver['source'];
  let load: CapacityProbeReport['load'];
  let leaderElection: ElectionResult;
  const storms: CapacityProbeReport['patchStorm'] = { product: null, upstream: null, target: null };
  const memory: CapacityProbeReport['memory'] = { product: null, upstream: null };
  const apiServerFlags: CapacityProbeReport['apiServerFlags'] = { product: [], upstream: [] };

  if (o.target.kind === 'local') {
    log('local: rendered pool-spirit (product etcd and kube-apiserver flags) on the built etcd + kube-apiserver');
    const stack = await o.target.start({
      etcd: product,
      apiServer: 'product',
      log: o.verbose ? log : undefined,
      http: { maxSockets },
    });
    try {
      const observer = localEtcdObserver(stack.etcd, stack.apiServerPid);
      server = stack.api.server;
      source = observer.source;
      apiServerFlags.product = memoryFlagsOf(stack.args.apiServer);
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
  } else {
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
  if (!main) throw new Error('capacity probe: no patch storm ran (neither on the product nor on the target)');
  const finished = new Date();
  const {
    log: _log,
    target: _target,
    lease: _lease,
    productEtcdOverrides: _overrides,
    verbose: _verbose,
    ...parameters
  } = o;
  return {
    kind: 'CapacityProbeReport',
    version: 1,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationSeconds: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
    target: { kind: o.target.kind, server, etcdFiguresFrom: source },
    parameters: { ...parameters, leaderElection: { unscaled: YURTHUB_LEADER_ELECTION, asRun: election } },
    etcdSettings: {
      product: product.flags,
      productOverrides: overrides,
      upstream: upstream.flags,
      launchPresetDiffers: diffFromLaunchPreset(),
    },
    apiServerFlags,
    load,
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
