/**
 * Write-throughput floor of the local Kubernetes API, per storage backend: creates/s and updates/s of
 * ~1 KB ConfigMaps through HTTP with @kubernetes/client-node at several concurrencies, watch event latency
 * (write response → event arrival) p50/p99, and memory (this process's RSS, which hosts the API server;
 * for etcd also etcd's RSS). Each figure is the median of `repeats` runs. Later benchmarks compare
 * against this floor: call measureWriteFloor() in the same run so both see the same machine state.
 */
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { makeKeepAliveApiClient } from '../../adapters/kubernetes/keep-alive-authentication.ts';
import { mapLimited } from '../../shared/map-limited.ts';
import { type LocalCluster, type Storage, startLocalCluster } from '../local/kube-api/index.ts';
import { collectGarbage, median, mib, percentile, processRss, round } from './lib/stats.ts';

export type Backend = 'memory' | 'etcd';

export interface WriteFloorOptions {
  backends?: Backend[];
  /** Runs per figure; medians are reported. Default 3 (minimum 1). */
  repeats?: number;
  /**
   * Runs made first and not reported, so the figures are of a warmed-up server. Default 0. The same floor
   * measured over and over in one process rose from ~2,050 to ~2,700 creates/s over its first ~15 runs
   * (V8's optimizing compiler and the heap settling), so a floor taken cold is a third below the server's.
   */
  warmupRepeats?: number;
  /** ConfigMaps created (then updated) per run and concurrency. Default 400. */
  objects?: number;
  concurrency?: number[];
  /** Sequential write→event samples per run. Default 200. */
  watchSamples?: number;
  payloadBytes?: number;
  /**
   * Whether the client keeps its connections open. Default false: client-node as it comes, which opens a
   * connection per request (the floor every earlier figure was measured against); true: the keep-alive
   * client the local stack's own clients use (adapters/kubernetes/keep-alive-authentication.ts).
   */
  keepAlive?: boolean;
  log?: (line: string) => void;
}

export interface BackendFloor {
  /** Keyed by concurrency, e.g. `{ "1": 850.2, "16": 2400.7 }`. */
  createsPerSec: Record<string, number>;
  updatesPerSec: Record<string, number>;
  watchLatencyMs: { p50: number; p99: number; samplesPerRun: number };
  /**
   * After a full GC with every written object still stored. The API server shares this process with the
   * benchmark's client, so `apiProcessRssGrowthMb` (RSS now minus RSS before this backend started) is the
   * figure attributable to the backend and its data.
   */
  memory: {
    apiProcessRssMb: number;
    apiProcessRssGrowthMb: number;
    apiProcessPeakRssMb: number;
    apiHeapUsedMb: number;
    etcdRssMb?: number;
    objectsStored: number;
  };
  runs: Array<{
    createsPerSec: Record<string, number>;
    updatesPerSec: Record<string, number>;
    watchP50Ms: number;
    watchP99Ms: number;
  }>;
}

export interface WriteFloor {
  config: Required<Omit<WriteFloorOptions, 'log'>>;
  backends: Partial<Record<Backend, BackendFloor>>;
}

interface Target {
  cluster: LocalCluster;
  api: k8s.CoreV1Api;
  kc: k8s.KubeConfig;
  etcdPid?: number;
  close(): Promise<void>;
}

async function startTarget(backend: Backend, keepAlive: boolean): Promise<Target> {
  let storage: Storage | undefined;
  let etcd: { pid: number; stop(): Promise<void> } | undefined;
  if (backend === 'etcd') {
    const { startEtcd } = await import('../local/etcd/launch.ts');
    const { createEtcdStorage } = await import('../local/kube-api/storage/etcd.ts');
    const running = await startEtcd();
    etcd = running;
    storage = await createEtcdStorage({ endpoints: [running.endpoint] });
  }
  const cluster = await startLocalCluster({ storage, name: `bench-${backend}`, garbageCollector: true });
  const kc = new k8s.KubeConfig();
  // client-node refuses plain http unless skipTLSVerify is set; over http there is no TLS to verify.
  kc.loadFromClusterAndUser({ name: cluster.name, server: cluster.url, skipTLSVerify: true }, { name: cluster.name });
  return {
    cluster,
    kc,
    api: keepAlive ? makeKeepAliveApiClient(kc, k8s.CoreV1Api) : kc.makeApiClient(k8s.CoreV1Api),
    etcdPid: etcd?.pid,
    async close() {
      await cluster.stop();
      await storage?.close();
      await etcd?.stop();
    },
  };
}

/** Runs `total` tasks with `concurrency` workers; returns tasks per second. */
async function throughput(total: number, concurrency: number, task: (i: number) => Promise<void>): Promise<number> {
  const start = performance.now();
  await mapLimited(
    Array.from({ length: total }, (_, i) => i),
    concurrency,
    task,
  );
  return total / ((performance.now() - start) / 1000);
}

function payload(bytes: number, salt: number): string {
  const unit = `salt-${salt}-abcdefghijklmnopqrstuvwxyz0123456789-`;
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

async function measureWrites(t: Target, ns: string, objects: number, concurrency: number, payloadBytes: number) {
  const created: k8s.V1ConfigMap[] = new Array(objects);
  const createsPerSec = await throughput(objects, concurrency, async (i) => {
    created[i] = await t.api.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: { name: `cm-c${concurrency}-${i}`, namespace: ns },
        data: { payload: payload(payloadBytes, i) },
      },
    });
  });
  const updatesPerSec = await throughput(objects, concurrency, async (i) => {
    const cm = created[i];
    await t.api.replaceNamespacedConfigMap({
      name: cm.metadata!.name!,
      namespace: ns,
      body: { ...cm, data: { payload: payload(payloadBytes, i + 1) } },
    });
  });
  return { createsPerSec, updatesPerSec };
}

/** Sequential writes; for each, the delay from its response to the arrival of its watch event. */
async function measureWatchLatency(t: Target, ns: string, samples: number, payloadBytes: number): Promise<number[]> {
  const arrivals = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const onEvent = (_type: string, obj: k8s.V1ConfigMap) => {
    const key = `${obj.metadata?.name}@${obj.metadata?.resourceVersion}`;
    arrivals.set(key, performance.now());
    waiters.get(key)?.();
  };
  let watchError: unknown;
  const abort = await new k8s.Watch(t.kc).watch(
    `/api/v1/namespaces/${ns}/configmaps`,
    {},
    onEvent,
    (err) => (watchError = err),
  );
  const arrival = (key: string) =>
    arrivals.has(key)
      ? Promise.resolve(arrivals.get(key)!)
      : new Promise<number>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`no watch event for ${key} within 10 s (${String(watchError ?? 'watch open')})`)),
            10_000,
          );
          waiters.set(key, () => {
            clearTimeout(timer);
            waiters.delete(key);
            resolve(arrivals.get(key)!);
          });
        });
  try {
    // The first event proves the watch is established before timing starts.
    let cm = await t.api.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'watched' }, data: { payload: payload(payloadBytes, 0) } },
    });
    await arrival(`watched@${cm.metadata!.resourceVersion}`);
    const latencies: number[] = [];
    for (let i = 1; i <= samples; i++) {
      cm = await t.api.replaceNamespacedConfigMap({
        name: 'watched',
        namespace: ns,
        body: { ...cm, data: { payload: payload(payloadBytes, i) } },
      });
      const responded = performance.now();
      const arrived = await arrival(`watched@${cm.metadata!.resourceVersion}`);
      // An event can beat the response to the client; it was then already there when the writer knew.
      latencies.push(Math.max(0, arrived - responded));
    }
    return latencies;
  } finally {
    abort.abort();
  }
}

async function measureBackend(
  backend: Backend,
  cfg: WriteFloor['config'],
  log: (s: string) => void,
): Promise<BackendFloor> {
  await collectGarbage();
  const baselineRss = process.memoryUsage().rss;
  const t = await startTarget(backend, cfg.keepAlive);
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  let stored = 0;
  try {
    const runs: BackendFloor['runs'] = [];
    for (let r = -cfg.warmupRepeats; r < cfg.repeats; r++) {
      const ns = `bench-${r + cfg.warmupRepeats}`;
      const label = r < 0 ? `warm-up ${r + cfg.warmupRepeats + 1}/${cfg.warmupRepeats}` : `run ${r + 1}/${cfg.repeats}`;
      await t.api.createNamespace({ body: { metadata: { name: ns } } });
      const run: BackendFloor['runs'][number] = { createsPerSec: {}, updatesPerSec: {}, watchP50Ms: 0, watchP99Ms: 0 };
      for (const c of cfg.concurrency) {
        const { createsPerSec, updatesPerSec } = await measureWrites(t, ns, cfg.objects, c, cfg.payloadBytes);
        stored += cfg.objects;
        run.createsPerSec[c] = round(createsPerSec, 1);
        run.updatesPerSec[c] = round(updatesPerSec, 1);
        log(
          `${backend} ${label} concurrency ${c}: ${run.createsPerSec[c]} creates/s, ${run.updatesPerSec[c]} updates/s`,
        );
      }
      const lat = await measureWatchLatency(t, ns, cfg.watchSamples, cfg.payloadBytes);
      stored += 1;
      run.watchP50Ms = round(percentile(lat, 50), 3);
      run.watchP99Ms = round(percentile(lat, 99), 3);
      log(`${backend} ${label} watch latency p50 ${run.watchP50Ms} ms, p99 ${run.watchP99Ms} ms`);
      if (r >= 0) runs.push(run);
    }
    const perConcurrency = (pick: (run: BackendFloor['runs'][number]) => Record<string, number>) =>
      Object.fromEntries(cfg.concurrency.map((c) => [String(c), round(median(runs.map((run) => pick(run)[c])), 1)]));
    await collectGarbage();
    const mem = process.memoryUsage();
    const etcdRss = t.etcdPid ? await processRss(t.etcdPid) : undefined;
    return {
      createsPerSec: perConcurrency((run) => run.createsPerSec),
      updatesPerSec: perConcurrency((run) => run.updatesPerSec),
      watchLatencyMs: {
        p50: round(median(runs.map((r) => r.watchP50Ms)), 3),
        p99: round(median(runs.map((r) => r.watchP99Ms)), 3),
        samplesPerRun: cfg.watchSamples,
      },
      memory: {
        apiProcessRssMb: mib(mem.rss),
        apiProcessRssGrowthMb: mib(mem.rss - baselineRss),
        apiProcessPeakRssMb: mib(Math.max(peakRss, mem.rss)),
        apiHeapUsedMb: mib(mem.heapUsed),
        ...(etcdRss !== undefined ? { etcdRssMb: mib(etcdRss) } : {}),
        objectsStored: stored,
      },
      runs,
    };
  } finally {
    clearInterval(sampler);
    await t.close();
  }
}

export async function measureWriteFloor(opts: WriteFloorOptions = {}): Promise<WriteFloor> {
  const config: WriteFloor['config'] = {
    backends: opts.backends ?? ['memory', 'etcd'],
    repeats: Math.max(1, opts.repeats ?? 3),
    warmupRepeats: Math.max(0, opts.warmupRepeats ?? 0),
    objects: opts.objects ?? 400,
    concurrency: opts.concurrency ?? [1, 16],
    watchSamples: opts.watchSamples ?? 200,
    payloadBytes: opts.payloadBytes ?? 1024,
    keepAlive: opts.keepAlive ?? false,
  };
  const log = opts.log ?? ((line: string) => process.stderr.write(`[local-api] ${line}\n`));
  const backends: WriteFloor['backends'] = {};
  for (const b of config.backends) backends[b] = await measureBackend(b, config, log);
  return { config, backends };
}

const OPTIONS_HELP = `options:
  --backends memory,etcd   storage backends to measure (default both)
  --repeats N              runs per figure, medians reported (default 3)
  --warmup N               runs made first and not reported (default 0)
  --objects N              ConfigMaps per run and concurrency (default 400)
  --concurrency 1,16       client concurrencies (default 1,16)
  --watch-samples N        write→event samples per run (default 200)
  --payload-bytes N        ConfigMap payload size (default 1024)
  --keep-alive             the client keeps connections open (default: client-node's one per request)`;

function parseArgs(args: string[]): WriteFloorOptions | 'help' {
  const opts: WriteFloorOptions = {};
  const integerFrom = (min: number, what: string) => (flag: string, v: string | undefined) => {
    const n = Number(v);
    if (v === undefined || v === '' || !Number.isInteger(n) || n < min)
      throw new Error(`${flag} expects a ${what}, got ${JSON.stringify(v)}\n${OPTIONS_HELP}`);
    return n;
  };
  const positiveInt = integerFrom(1, 'positive integer');
  const nonNegativeInt = integerFrom(0, 'non-negative integer');
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    const value = args[i + 1];
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--backends': {
        const list = (value ?? '').split(',').filter(Boolean);
        const bad = list.filter((b) => b !== 'memory' && b !== 'etcd');
        if (list.length === 0 || bad.length)
          throw new Error(`--backends expects a list of memory,etcd, got ${JSON.stringify(value)}`);
        opts.backends = list as Backend[];
        i++;
        break;
      }
      case '--concurrency':
        opts.concurrency = (value ?? '').split(',').map((v) => positiveInt('--concurrency', v));
        i++;
        break;
      case '--repeats':
        opts.repeats = positiveInt(flag, value);
        i++;
        break;
      case '--warmup':
        opts.warmupRepeats = nonNegativeInt(flag, value);
        i++;
        break;
      case '--objects':
        opts.objects = positiveInt(flag, value);
        i++;
        break;
      case '--watch-samples':
        opts.watchSamples = positiveInt(flag, value);
        i++;
        break;
      case '--keep-alive':
        opts.keepAlive = true;
        break;
      case '--payload-bytes':
        opts.payloadBytes = positiveInt(flag, value);
        i++;
        break;
      default:
        throw new Error(`unknown option ${JSON.stringify(flag)}\n${OPTIONS_HELP}`);
    }
  }
  return opts;
}

export async function run(args: string[]): Promise<unknown> {
  const opts = parseArgs(args);
  if (opts === 'help') {
    process.stderr.write(`usage: npm run bench -- local-api [options]\n${OPTIONS_HELP}\n`);
    return { benchmark: 'local-api', help: true };
  }
  const os = await import('node:os');
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg()[0];
  const floor = await measureWriteFloor(opts);
  return {
    benchmark: 'local-api',
    startedAt,
    // Other work on the machine skews every figure; the 1-minute load average says how much there was.
    machine: {
      node: process.version,
      cpus: os.cpus().length,
      platform: process.platform,
      loadAvg1mBefore: round(loadBefore),
      loadAvg1mAfter: round(os.loadavg()[0]),
    },
    ...floor,
  };
}
