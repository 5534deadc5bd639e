/**
 * Reconcile benchmark, in process on the local Kubernetes API + dynalite, calling the real handler:
 * - cluster writes per new pool against the minimum (objects it needs + 1 status write), by resource;
 * - cluster writes per no-op reconcile (target 0);
 * - state-table write units per reconcile (DynamoDB ConsumedCapacity, target ≤ 3);
 * - reconcile latency p50/p99 for a new pool and for a no-op.
 * Options: --pools N (new pools, default 20), --noops N (no-op reconciles, default 100).
 */
import { performance } from 'node:perf_hooks';
import { IP_ALLOCATOR, startReconcileWorld } from '../../test/functions/reconcile/harness.ts';
import { percentile, round } from './lib/stats.ts';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(args[i + 1]);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name}: expected a positive integer, got ${args[i + 1]}`);
  return value;
}

const latency = (samples: number[]) => ({
  p50: round(percentile(samples, 50)),
  p99: round(percentile(samples, 99)),
  samples: samples.length,
});

export async function run(args: string[] = []): Promise<object> {
  if (args.includes('--help')) {
    process.stderr.write('usage: npm run bench -- reconcile [--pools N] [--noops N] [--control-plane real|local]\n');
    return {};
  }
  const pools = option(args, 'pools', 20);
  const noops = option(args, 'noops', 100);
  // The built control plane by default: what users pay is the product against kube-apiserver.
  const controlPlane = args[args.indexOf('--control-plane') + 1] === 'local' ? 'local' : 'real';
  const world = await startReconcileWorld({ controlPlane });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const writes = () => world.requestLog;
    const reconcilerWrites = async (mark: number) =>
      (await writes().writesSince(mark)).filter((r) => r.fieldManager !== IP_ALLOCATOR);

    // Warm-up (JIT, discovery caches) on a pool that is not measured.
    await world.createNodePool('warmup', { type: 'Edge' });
    await world.invoke('warmup');
    await world.invoke('warmup');

    const newPool = {
      latencyMs: [] as number[],
      writes: [] as number[],
      minimum: [] as number[],
      tableUnits: [] as number[],
    };
    const byResource: Record<string, number> = {};
    for (let i = 0; i < pools; i++) {
      const name = `edge-${i}`;
      await world.createNodePool(name, { type: 'Edge' });
      const mark = await writes().mark();
      const started = performance.now();
      const result = await world.invoke(name);
      newPool.latencyMs.push(performance.now() - started);
      const made = await reconcilerWrites(mark);
      newPool.writes.push(made.length);
      newPool.minimum.push(new Set(result.applied).size + 1);
      newPool.tableUnits.push(result.tableWriteUnits);
      for (const r of made) {
        const key = r.subresource ? `${r.resource}/${r.subresource}` : String(r.resource);
        byResource[key] = (byResource[key] ?? 0) + 1;
      }
    }
    log(`reconcile bench: ${pools} new pools done`);

    const noop = { latencyMs: [] as number[], writes: [] as number[], tableUnits: [] as number[] };
    for (let i = 0; i < noops; i++) {
      const name = `edge-${i % pools}`;
      const mark = await writes().mark();
      const started = performance.now();
      const result = await world.invoke(name);
      noop.latencyMs.push(performance.now() - started);
      noop.writes.push((await reconcilerWrites(mark)).length);
      noop.tableUnits.push(result.tableWriteUnits);
    }
    log(`reconcile bench: ${noops} no-op reconciles done`);

    // A duplicate event: refused by the lease write's condition (billed as 1 unit), nothing else.
    await world.invoke('edge-0', { eventId: 'bench-dup' });
    const dup = await world.invoke('edge-0', { eventId: 'bench-dup' });

    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const writesPerNewPool = sum(newPool.writes) / pools;
    const minimumPerNewPool = sum(newPool.minimum) / pools;
    const eventsPerNewPool = (byResource.events ?? 0) / pools;
    const maxTableUnits = Math.max(...newPool.tableUnits, ...noop.tableUnits);
    return {
      benchmark: 'reconcile',
      config: { pools, noops, storage: 'memory', keyFactory: 'caching (one key pair per certificate purpose)' },
      newPool: {
        clusterWritesPerPool: round(writesPerNewPool),
        minimumPerPool: round(minimumPerNewPool),
        overMinimum: round(writesPerNewPool - minimumPerNewPool),
        note: 'minimum = objects the pool needs (PoolSpirit + rendered objects) + 1 status write; a new pool records no Event unless a warning (its creation is not a transition)',
        eventsPerPool: round(eventsPerNewPool),
        writesByResource: Object.fromEntries(Object.entries(byResource).map(([k, v]) => [k, round(v / pools)])),
        tableWriteUnitsPerReconcile: round(sum(newPool.tableUnits) / pools),
        latencyMs: latency(newPool.latencyMs),
      },
      noop: {
        clusterWritesPerReconcile: round(sum(noop.writes) / noops),
        tableWriteUnitsPerReconcile: round(sum(noop.tableUnits) / noops),
        latencyMs: latency(noop.latencyMs),
      },
      duplicateEvent: { result: dup.result, tableWriteUnits: dup.tableWriteUnits, clusterWrites: dup.clusterWrites },
      targets: {
        noopZeroWrites: sum(noop.writes) === 0,
        newPoolWithinMinimumPlusEvents: writesPerNewPool <= minimumPerNewPool + eventsPerNewPool,
        newPoolWithinMinimum: writesPerNewPool <= minimumPerNewPool,
        tableWriteUnitsAtMost3: maxTableUnits <= 3,
      },
    };
  } finally {
    await world.stop();
  }
}
