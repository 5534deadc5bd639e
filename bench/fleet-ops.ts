/**
 * Issue 6's fleet runs on one fleet instead of two: converge a local fleet (default 20 clusters × 50 pools,
 * sim mode), run the rollout scenario (canary and waves to Succeeded; then a version that never gets healthy
 * in the last cluster, which must stop and roll back by itself), then the audit scenario (one drift of each
 * kind injected, the whole fleet audited, fixable ones fixed). One JSON document with both.
 * `npm run bench -- fleet-ops [--clusters 20] [--pools 50] [--soak 2s] [--tick 500] [--max-concurrency 25%] [--bad-deadline 2m]`
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { clusterId, startLocalFleet } from '../local/fleet/fleet.ts';
import { intFlag } from '../cli/command.ts';
import { round } from './lib/stats.ts';
import { BAD_AGENT_VERSION, rolloutScenario } from './rollout.ts';
import { auditScenario } from './audit.ts';

const log = (line: string) => process.stderr.write(`[fleet-ops] ${line}\n`);

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      clusters: { type: 'string', default: '20' },
      pools: { type: 'string', default: '50' },
      soak: { type: 'string', default: '2s' },
      tick: { type: 'string', default: '500' },
      'max-concurrency': { type: 'string', default: '25%' },
      // Longer than a healthy wave of 5 × 50 pools takes here (≤ 45 s), so only the bad cluster misses it.
      'bad-deadline': { type: 'string', default: '2m' },
    },
  });
  const clusters = intFlag('clusters', values.clusters, 2, 200);
  const pools = intFlag('pools', values.pools, 9, 1000);
  const tickMs = intFlag('tick', values.tick, 10, 600_000);
  const dir = await mkdtemp(join(tmpdir(), 'ps-bench-fleet-ops-'));
  log(`starting ${clusters} clusters × ${pools} pools (agent ${BAD_AGENT_VERSION} never gets Ready in ${clusterId(clusters - 1)})…`);
  const t0 = performance.now();
  const fleet = await startLocalFleet({
    clusters, pools, nodesPerPool: 1, stateDir: dir, readyDelayMs: 0, retryBaseDelayMs: 50, reconcileConcurrency: 32,
    functionThreads: 1, unhealthyVersions: { [clusterId(clusters - 1)]: [BAD_AGENT_VERSION] },
  });
  try {
    await fleet.waitConverged(45 * 60_000, (p) => {
      const a = p.clusters.reduce((n, c) => n + c.available, 0);
      if (a % 50 === 0) log(`${a}/${clusters * pools} Available after ${round((performance.now() - t0) / 1000, 1)} s`);
    });
    const convergeSeconds = round((performance.now() - t0) / 1000, 1);
    log(`converged in ${convergeSeconds} s`);
    const rollouts = await rolloutScenario(fleet, { tickMs, maxConcurrency: String(values['max-concurrency']), soak: String(values.soak), badDeadline: String(values['bad-deadline']) });
    const audit = await auditScenario(fleet);
    return { benchmark: 'fleet-ops', fleet: { clusters, poolsPerCluster: pools, pools: clusters * pools, kubelet: 'sim', convergeSeconds }, rollouts, audit };
  } finally {
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
