/**
 * The patch storm: random read-modify-write updates (GET, change, PUT with the resourceVersion read;
 * a 409 Conflict is retried with a fresh GET) at a fixed concurrency for a fixed time, while memory and
 * db size are sampled every interval and — where the probe can act on etcd — the agent's maintenance runs
 * (defragment when core's etcdNeedsDefrag says so, disarm NOSPACE; compaction is etcd's own, by its flags).
 */

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { EtcdObserver, EtcdSnapshot, MaintenanceAction } from './etcd-observer.ts';
import type { KubeHttp } from './kube-http.ts';
import { type LatencySummary, summarize } from './load.ts';
import { type MemoryVerdict, memoryVerdict } from './verdict.ts';

export interface StormOptions {
  seconds: number;
  concurrency: number;
  /** API paths of the objects to update. */
  paths: string[];
  sampleIntervalMs: number;
  /** How often the simulated agent looks at etcd. */
  maintenanceIntervalMs: number;
  observer: EtcdObserver;
  limitBytes: number;
  tolerance: number;
  /** Updates before memory can be steady (see verdict.ts); 0 when etcd's flags are unknown. */
  warmupUpdates: number;
  /** Conflicts retried per update before giving up on it. */
  maxConflictRetries?: number;
}

export interface StormSample extends EtcdSnapshot {
  /** Seconds since the storm started. */
  t: number;
  /** Updates completed so far. */
  updates: number;
  /** p99 latency (ms) of the updates completed since the previous sample; null when none completed. */
  windowP99Ms: number | null;
}

export interface StormResult {
  seconds: number;
  concurrency: number;
  updates: number;
  updatesPerSecond: number;
  conflicts: number;
  errors: number;
  errorSamples: string[];
  latencyMs: LatencySummary;
  samples: StormSample[];
  maintenance: MaintenanceAction[];
  /**
   * What the verdict judged: the etcd container's cgroup working set (tmpfs included) on a node the probe
   * runs on, else RSS + tmpfs when both are visible, else RSS alone.
   */
  memoryBasis: 'cgroup' | 'rss+tmpfs' | 'rss' | 'none';
  verdict: MemoryVerdict;
}

const PATCH_ANNOTATION = 'probe.poolspirit.io/last-patch';

export async function patchStorm(api: KubeHttp, o: StormOptions): Promise<StormResult> {
  const [firstPath] = o.paths;
  if (firstPath === undefined) throw new Error('patch storm: no objects to update');
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const endAt = started + o.seconds * 1000;
  let updates = 0;
  let conflicts = 0;
  const errors: string[] = [];
  const latencies: number[] = [];

  async function updateOnce(path: string): Promise<void> {
    const maxRetries = o.maxConflictRetries ?? 5;
    for (let attempt = 0; ; attempt++) {
      const got = await api.request<{ metadata: { annotations?: Record<string, string> } }>('GET', path);
      if (got.status !== 200) throw new Error(`GET: HTTP ${got.status} ${messageOf(got.body)}`);
      const obj = got.body;
      obj.metadata.annotations = {
        ...obj.metadata.annotations,
        [PATCH_ANNOTATION]: `${Date.now()}-${randomBytes(8).toString('hex')}`,
      };
      const put = await api.request('PUT', path, obj);
      if (put.status === 200) return;
      if (put.status === 409 && attempt < maxRetries) {
        conflicts++;
        continue;
      }
      throw new Error(`PUT: HTTP ${put.status} ${messageOf(put.body)}`);
    }
  }

  const worker = async () => {
    while (performance.now() < endAt) {
      const path = o.paths[Math.floor(Math.random() * o.paths.length)] ?? firstPath;
      const t0 = performance.now();
      try {
        await updateOnce(path);
        updates++;
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors.push((err as Error).message);
        // A refusing etcd (NOSPACE) answers at once; do not spin on it.
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };

  const samples: StormSample[] = [];
  let seen = 0;
  const sampler = (async () => {
    for (let k = 0; ; k++) {
      const at = started + k * o.sampleIntervalMs;
      if (at > endAt + 1) break;
      await sleepUntil(at);
      const window = latencies.slice(seen);
      seen = latencies.length;
      const windowP99Ms = window.length ? summarize(window).p99 : null;
      samples.push({ t: round(elapsed()), updates, windowP99Ms, ...(await o.observer.snapshot()) });
    }
  })();

  const maintenance: MaintenanceAction[] = [];
  const maintain = o.observer.maintain;
  const agent = maintain
    ? (async () => {
        while (performance.now() + o.maintenanceIntervalMs < endAt) {
          await sleepUntil(performance.now() + o.maintenanceIntervalMs);
          maintenance.push(
            ...(await maintain(round(elapsed())).catch((err) => [
              {
                atSeconds: round(elapsed()),
                action: 'defragment' as const,
                durationMs: 0,
                detail: `failed: ${(err as Error).message}`,
              },
            ])),
          );
        }
      })()
    : Promise.resolve();

  await Promise.all([...Array.from({ length: o.concurrency }, worker), sampler, agent]);
  const seconds = elapsed();

  const etcdCgroup = (s: StormSample) => s.pod?.containers.etcd ?? null;
  const basis: StormResult['memoryBasis'] = samples.some((s) => etcdCgroup(s) !== null)
    ? 'cgroup'
    : samples.some((s) => s.memoryBytes !== null)
      ? 'rss+tmpfs'
      : samples.some((s) => s.rssBytes !== null)
        ? 'rss'
        : 'none';
  const bytesOf = (s: StormSample): number | null =>
    basis === 'cgroup' ? (etcdCgroup(s)?.workingSetBytes ?? null) : basis === 'rss+tmpfs' ? s.memoryBytes : s.rssBytes;
  // Where the kernel enforces a limit, judge against the limit it enforces, not the one rendered.
  const enforced = basis === 'cgroup' ? samples.map((s) => etcdCgroup(s)?.limitBytes).find((l) => l) : undefined;
  const verdict = memoryVerdict({
    samples: samples.map((s) => ({ t: s.t, updates: s.updates, bytes: bytesOf(s) })),
    limitBytes: enforced ?? o.limitBytes,
    tolerance: o.tolerance,
    warmupUpdates: o.warmupUpdates,
  });
  return {
    seconds: round(seconds),
    concurrency: o.concurrency,
    updates,
    updatesPerSecond: round(updates / seconds),
    conflicts,
    errors: errors.length,
    errorSamples: [...new Set(errors)].slice(0, 3),
    latencyMs: summarize(latencies),
    samples,
    maintenance,
    memoryBasis: basis,
    verdict,
  };
}

function messageOf(body: unknown): string {
  const m = (body as { message?: unknown } | undefined)?.message;
  return typeof m === 'string' ? `(${m.slice(0, 200)})` : '';
}

function sleepUntil(at: number): Promise<void> {
  const ms = at - performance.now();
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
