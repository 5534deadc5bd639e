/**
 * What every fleet benchmark shares: the fleet-shape flags, a local fleet started with benchmark settings
 * (pods Ready at once, short bus retries, the reconcile function in a worker thread) in a temporary state
 * directory, and its cleanup however the run ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { intFlag } from '../../../cli/command.ts';
import { type LocalFleet, type LocalFleetOptions, localApiOf, startLocalFleet } from '../../local/fleet/fleet.ts';
import { createIfMissing, edgeNode, nodeName, nodePool, poolName, runLimited } from '../../local/fleet/seed.ts';
import { round } from './stats.ts';

export const FLEET_SHAPE_FLAGS = {
  clusters: { type: 'string', default: '20' },
  pools: { type: 'string', default: '50' },
} as const;

export function fleetShape(
  values: { clusters?: unknown; pools?: unknown },
  min: { clusters?: number; pools?: number } = {},
) {
  return {
    clusters: intFlag('clusters', values.clusters, min.clusters ?? 1, 200),
    pools: intFlag('pools', values.pools, min.pools ?? 1, 1000),
  };
}

export async function withBenchFleet<T>(
  name: string,
  options: Omit<LocalFleetOptions, 'stateDir'>,
  body: (fleet: LocalFleet) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `ps-bench-${name}-`));
  let fleet: LocalFleet | undefined;
  try {
    fleet = await startLocalFleet({
      readyDelayMs: 0,
      retryBaseDelayMs: 50,
      reconcileConcurrency: 20,
      functionThreads: 1,
      ...options,
      stateDir: dir,
    });
    return await body(fleet);
  } finally {
    await fleet?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Writes each cluster's local API has made so far (asked in its cluster thread when it runs in one): write
 * requests it answered with a 2xx. A refused one (a 404, a 409 conflict) changed nothing, and the write floor
 * it is compared with counts only creates that succeeded.
 */
export function apiWritesPerCluster(fleet: LocalFleet): Promise<number[]> {
  return Promise.all(fleet.clusters.map((c) => localApiOf(c).requestLog.countWritesSince(0, { successfulOnly: true })));
}

/**
 * Creates `pools` edge NodePools with one node each in every cluster of the fleet (4 requests at a time per
 * cluster), numbered from `firstPool`.
 */
export async function createEdgePools(fleet: LocalFleet, pools: number, firstPool = 0): Promise<void> {
  await runLimited(fleet.clusters, fleet.clusters.length, async (c) => {
    const api = RawObjectApi.fromKubeConfig(c.kubeConfig);
    const objects = [];
    for (let i = firstPool; i < firstPool + pools; i++)
      objects.push(edgeNode(nodeName(poolName(i), 0), poolName(i)), nodePool(poolName(i), 'Edge'));
    await runLimited(objects, 4, (o) => createIfMissing(api, o));
  });
}

export const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);

/** Waits for the whole fleet to be Available and returns the seconds since `startedAt` (performance.now()). */
export async function convergedAfter(
  fleet: LocalFleet,
  startedAt: number,
  timeoutMs: number,
  onTick?: Parameters<LocalFleet['waitConverged']>[1],
): Promise<number> {
  await fleet.waitConverged(timeoutMs, onTick);
  return round((performance.now() - startedAt) / 1000, 1);
}
