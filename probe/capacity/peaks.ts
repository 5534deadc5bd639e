/** The highest memory figures a side reached: what its containers' memory limits must hold. */
import type { PodCgroupSnapshot } from './cgroup.ts';
import type { EtcdSnapshot } from './etcd-observer.ts';
import { APISERVER_MEMORY_FLAGS } from './pool-spirit-target.ts';

export interface MemoryPeaks {
  /** kube-apiserver RSS in the first snapshot, before the probe wrote anything. */
  apiServerIdleRssBytes: number | null;
  apiServerRssBytes: number | null;
  etcdRssBytes: number | null;
  etcdTmpfsBytes: number | null;
  /** RSS − RssShmem + tmpfs: what the etcd container is charged (the db's pages once). */
  etcdMemoryBytes: number | null;
  /** The pod as its cgroups account it (a pod on a node the probe runs on), else null. */
  pod: PodPeaks | null;
  /** Snapshots and samples the peaks are taken over. */
  samples: number;
}

/** Highest cgroup figures of a pod: what the kernel enforces limits against. */
export interface PodPeaks {
  /** The pod's working set in the first snapshot, before the probe wrote anything. */
  idleWorkingSetBytes: number | null;
  workingSetBytes: number;
  usageBytes: number;
  /** The highest usage the kernel itself recorded (between samples too), where it keeps one. */
  kernelPeakUsageBytes: number | null;
  limitBytes: number | null;
  /** OOM kills in the pod's cgroups by the last snapshot. */
  oomKills: number;
  /** Per container: the highest working set (tmpfs included) and the limit its cgroup enforces. */
  containers: Record<string, { workingSetBytes: number; limitBytes: number | null }>;
}

/** `snapshots` in the order taken, the idle one first. */
export function memoryPeaks(snapshots: ReadonlyArray<EtcdSnapshot | null>): MemoryPeaks {
  const seen = snapshots.filter((s): s is EtcdSnapshot => s !== null);
  const max = (pick: (s: EtcdSnapshot) => number | null) => {
    const values = seen.map(pick).filter((v): v is number => v !== null);
    return values.length ? Math.max(...values) : null;
  };
  return {
    apiServerIdleRssBytes: seen[0]?.apiRssBytes ?? null,
    apiServerRssBytes: max((s) => s.apiRssBytes),
    etcdRssBytes: max((s) => s.rssBytes),
    etcdTmpfsBytes: max((s) => s.tmpfsBytes),
    etcdMemoryBytes: max((s) => s.memoryBytes),
    pod: podPeaks(seen),
    samples: seen.length,
  };
}

function podPeaks(seen: readonly EtcdSnapshot[]): PodPeaks | null {
  const pods = seen.map((s) => s.pod).filter((p): p is PodCgroupSnapshot => p !== null);
  const [first] = pods;
  if (!first) return null;
  const most = (values: Array<number | null>) => {
    const known = values.filter((v): v is number => v !== null);
    return known.length ? Math.max(...known) : null;
  };
  const containers: PodPeaks['containers'] = {};
  for (const p of pods)
    for (const [name, c] of Object.entries(p.containers)) {
      const was = containers[name];
      containers[name] = {
        workingSetBytes: Math.max(was?.workingSetBytes ?? 0, c.workingSetBytes),
        limitBytes: c.limitBytes ?? was?.limitBytes ?? null,
      };
    }
  return {
    idleWorkingSetBytes: seen[0]?.pod?.workingSetBytes ?? null,
    workingSetBytes: Math.max(...pods.map((p) => p.workingSetBytes)),
    usageBytes: Math.max(...pods.map((p) => p.usageBytes)),
    kernelPeakUsageBytes: most(pods.map((p) => p.peakUsageBytes)),
    limitBytes: pods.at(-1)?.limitBytes ?? null,
    oomKills: Math.max(...pods.map((p) => p.oomKills)),
    containers,
  };
}

/** The memory flags among a kube-apiserver's args. */
export function memoryFlagsOf(args: readonly string[]): string[] {
  return args.filter((a) => APISERVER_MEMORY_FLAGS.some((f) => a.startsWith(`--${f}=`)));
}

/**
 * A limit must hold the measured peak times this: Go's GC lets an apiserver's heap reach about twice
 * its live set between cycles, and a pool's real objects and watchers differ from the probe's.
 */
export const MEMORY_LIMIT_MARGIN = 1.5;

/** What `--peaks-out` writes: the product side's peaks of one run, and the shape that produced them. */
export interface PeaksRecord {
  kind: 'CapacityPeaks';
  measuredAt: string;
  shape: {
    nodes: number;
    pods: number;
    objectBytes: number;
    contenders: number;
    patchStormSeconds: number;
    timeScale: number;
  };
  apiServerFlags: { product: string[]; upstream: string[] };
  product: MemoryPeaks;
  upstream: MemoryPeaks | null;
}

export function peaksRecord(report: {
  finishedAt: string;
  parameters: {
    nodes: number;
    pods: number;
    objectBytes: number;
    contenders: number;
    patchStormSeconds: number;
    timeScale: number;
  };
  apiServerFlags: { product: string[]; upstream: string[] };
  memory: { product: MemoryPeaks | null; upstream: MemoryPeaks | null };
}): PeaksRecord {
  if (!report.memory.product)
    throw new Error('peaks: the report has no product memory figures (only a --local run measures them)');
  const { nodes, pods, objectBytes, contenders, patchStormSeconds, timeScale } = report.parameters;
  return {
    kind: 'CapacityPeaks',
    measuredAt: report.finishedAt,
    shape: { nodes, pods, objectBytes, contenders, patchStormSeconds, timeScale },
    apiServerFlags: report.apiServerFlags,
    product: report.memory.product,
    upstream: report.memory.upstream,
  };
}
