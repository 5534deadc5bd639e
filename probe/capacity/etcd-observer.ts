/**
 * What the probe can see of the etcd behind the apiserver. Memory means RSS of the etcd process PLUS the
 * bytes its data dir holds in tmpfs (a `medium: Memory` emptyDir is charged to the pod), reported apart
 * and summed — counting each page once: etcd mmaps its db file, so the db's resident pages show up in
 * RSS (as RssShmem) *and* in the tmpfs; the cgroup charges them once, and so does `memoryBytes`
 * (RSS − RssShmem + tmpfs). Measured: RssShmem tracked the db size (80 MB of a 274 MB RSS mid-storm).
 *
 * Locally everything is visible; against a remote apiserver only what etcd's metrics endpoint exposes
 * (RSS and db sizes, not tmpfs), and nothing at all without one — then figures are `null`.
 */
import { readFile } from 'node:fs/promises';
import type { EtcdAccess } from '../../agent/adapters/etcd.ts';
import { etcdNeedsDefrag } from '../../core/etcd-health.ts';
import { dirBytes, processRssBytes } from '../../shared/process-metrics.ts';
import { type PodCgroupSnapshot, type PodCgroupSource, podCgroupSnapshot } from './cgroup.ts';

export interface EtcdSnapshot {
  /** etcd process resident memory (VmRSS). */
  rssBytes: number | null;
  /** The part of RSS that is tmpfs pages mapped in (the db file): already counted in tmpfsBytes. */
  rssShmemBytes: number | null;
  /** Bytes the data dir holds in tmpfs (WAL, snapshots, db). */
  tmpfsBytes: number | null;
  /** What the pod is charged: rssBytes − rssShmemBytes + tmpfsBytes, when all are known. */
  memoryBytes: number | null;
  dbSizeBytes: number | null;
  dbSizeInUseBytes: number | null;
  alarms: string[] | null;
  revision: number | null;
  /** The apiserver process's RSS, when it runs here. */
  apiRssBytes: number | null;
  /** The whole pod as its cgroups account it, when it runs on this node under a kubelet (null otherwise). */
  pod: PodCgroupSnapshot | null;
}

export interface MaintenanceAction {
  /** Seconds since the phase started. */
  atSeconds: number;
  action: 'defragment' | 'disarm';
  durationMs: number;
  detail: string;
}

export interface EtcdObserver {
  /** Where the figures come from, for the report. */
  readonly source: 'local-process' | 'metrics-endpoint' | 'unavailable';
  snapshot(): Promise<EtcdSnapshot>;
  /** The agent's maintenance, where the probe may act on etcd (local only): defragment, disarm NOSPACE. */
  maintain?(atSeconds: number): Promise<MaintenanceAction[]>;
  /** Compacts to the current revision and defragments (local only): what deleting frees once history goes. */
  compactAndDefragment?(): Promise<void>;
}

const EMPTY: EtcdSnapshot = {
  rssBytes: null,
  rssShmemBytes: null,
  tmpfsBytes: null,
  memoryBytes: null,
  dbSizeBytes: null,
  dbSizeInUseBytes: null,
  alarms: null,
  revision: null,
  apiRssBytes: null,
  pod: null,
};

/**
 * An etcd running on this host, reached over its TLS client port the way the agent reaches it (the
 * agent's own EtcdAccess, with the rendered client certificate). With `pod` (a pod on this node), the
 * processes are looked up at each snapshot, so a restarted container is still seen, and the pod's cgroups
 * are read too.
 */
export function localEtcdObserver(
  etcd: { pid: number; dataDir: string; access: EtcdAccess },
  apiPid?: number,
  pod?: PodCgroupSource,
): EtcdObserver {
  const status = async () => {
    const r = await etcd.access.read();
    return {
      dbSizeBytes: r.dbSizeBytes ?? 0,
      dbSizeInUseBytes: r.dbSizeInUseBytes ?? 0,
      alarms: r.alarms ?? [],
      revision: r.revision ?? 0,
    };
  };
  return {
    source: 'local-process',
    async snapshot() {
      const pids = pod
        ? await pod.containerPids().catch((): Record<string, number> => ({}))
        : { etcd: etcd.pid, 'kube-apiserver': apiPid };
      const etcdPid = pids.etcd;
      const apiServerPid = pids['kube-apiserver'];
      const [mem, tmpfs, s, apiRss, cgroups] = await Promise.all([
        etcdPid ? processMemory(etcdPid).catch(() => null) : null,
        dirBytes(etcd.dataDir).catch(() => null),
        withTimeout(status(), 5000).catch(() => null),
        apiServerPid ? processRssBytes(apiServerPid).catch(() => null) : null,
        pod ? podCgroupSnapshot(pod).catch(() => null) : null,
      ]);
      return {
        rssBytes: mem?.rss ?? null,
        rssShmemBytes: mem?.shmem ?? null,
        tmpfsBytes: tmpfs,
        memoryBytes: mem && tmpfs !== null ? mem.rss - mem.shmem + tmpfs : null,
        dbSizeBytes: s?.dbSizeBytes ?? null,
        dbSizeInUseBytes: s?.dbSizeInUseBytes ?? null,
        alarms: s?.alarms ?? null,
        revision: s?.revision ?? null,
        apiRssBytes: apiRss,
        pod: cgroups,
      };
    },
    async maintain(atSeconds) {
      const actions: MaintenanceAction[] = [];
      const before = await status();
      if (etcdNeedsDefrag(before)) {
        const started = Date.now();
        await etcd.access.defragment();
        const after = await status();
        actions.push({
          atSeconds,
          action: 'defragment',
          durationMs: Date.now() - started,
          detail: `db ${mb(before.dbSizeBytes)} → ${mb(after.dbSizeBytes)} MB (in use ${mb(after.dbSizeInUseBytes)} MB)`,
        });
      }
      if (before.alarms.includes('NOSPACE')) {
        const started = Date.now();
        await etcd.access.disarmNoSpace();
        actions.push({ atSeconds, action: 'disarm', durationMs: Date.now() - started, detail: 'cleared NOSPACE' });
      }
      return actions;
    },
    async compactAndDefragment() {
      await etcd.access.compact((await status()).revision);
      await etcd.access.defragment();
    },
  };
}

/** Scrapes etcd's Prometheus endpoint (`--listen-metrics-urls`): RSS and db sizes, no tmpfs. */
export function metricsEtcdObserver(metricsUrl: string): EtcdObserver {
  const url = new URL('/metrics', metricsUrl);
  return {
    source: 'metrics-endpoint',
    async snapshot() {
      let text: string;
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) return EMPTY;
        text = await res.text();
      } catch {
        return EMPTY;
      }
      const metric = (...names: string[]) => {
        for (const name of names) {
          const m = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)$`, 'm').exec(text);
          if (m) return Number(m[1]);
        }
        return null;
      };
      return {
        ...EMPTY,
        rssBytes: metric('process_resident_memory_bytes'),
        dbSizeBytes: metric('etcd_mvcc_db_total_size_in_bytes', 'etcd_debugging_mvcc_db_total_size_in_bytes'),
        dbSizeInUseBytes: metric('etcd_mvcc_db_total_size_in_use_in_bytes'),
      };
    },
  };
}

export function unavailableEtcdObserver(): EtcdObserver {
  return { source: 'unavailable', snapshot: async () => EMPTY };
}

/** VmRSS and RssShmem of a process, from /proc. */
async function processMemory(pid: number): Promise<{ rss: number; shmem: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  const rss = kb('VmRSS');
  if (!Number.isFinite(rss)) throw new Error(`/proc/${pid}/status has no VmRSS line`);
  const shmem = kb('RssShmem');
  return { rss, shmem: Number.isFinite(shmem) ? shmem : 0 };
}

function mb(bytes: number): number {
  return Math.round((bytes / 2 ** 20) * 10) / 10;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref()),
  ]);
}
