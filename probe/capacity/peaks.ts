/** The highest memory figures a side reached: what its containers' memory limits must hold. */
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
  /** Snapshots and samples the peaks are taken over. */
  samples: number;
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
    samples: seen.length,
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
