/**
 * The fleet-scale rollout and audit benchmarks on one fleet instead of two: converge a local fleet (default 20 clusters × 50 pools,
 * sim mode), run the rollout scenario (canary and waves to Succeeded; then a version that never gets healthy
 * in the last cluster, which must stop and roll back by itself), then the audit scenario (one drift of each
 * kind injected, the whole fleet audited, fixable ones fixed). One JSON document with both.
 * `npm run bench -- fleet-ops [--clusters 20] [--pools 50] [--soak 2s] [--tick 500] [--max-concurrency 25%] [--bad-deadline 2m]`
 */
import { parseArgs } from 'node:util';
import { clusterId } from '../local/fleet/fleet.ts';
import { auditScenario } from './audit.ts';
import { convergedAfter, FLEET_SHAPE_FLAGS, fleetShape, withBenchFleet } from './lib/bench-fleet.ts';
import { round } from './lib/stats.ts';
import { BAD_AGENT_VERSION, ROLLOUT_SCENARIO_FLAGS, rolloutScenario, rolloutScenarioOptions } from './rollout.ts';

const log = (line: string) => process.stderr.write(`[fleet-ops] ${line}\n`);

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      ...FLEET_SHAPE_FLAGS,
      ...ROLLOUT_SCENARIO_FLAGS,
      // Longer than a healthy wave of 5 × 50 pools takes here (≤ 50 s), so only the bad cluster misses it.
      'bad-deadline': { type: 'string', default: '2m' },
    },
  });
  // The audit scenario needs one pool per injected drift kind, the rollout one a last (bad) cluster.
  const { clusters, pools } = fleetShape(values, { clusters: 2, pools: 9 });
  const scenario = rolloutScenarioOptions(values);
  const bad = clusterId(clusters - 1);
  log(`starting ${clusters} clusters × ${pools} pools (agent ${BAD_AGENT_VERSION} never gets Ready in ${bad})…`);
  const t0 = performance.now();
  return withBenchFleet(
    'fleet-ops',
    { clusters, pools, nodesPerPool: 1, unhealthyVersions: { [bad]: [BAD_AGENT_VERSION] } },
    async (fleet) => {
      const convergeSeconds = await convergedAfter(fleet, t0, 45 * 60_000, (p) => {
        const a = p.clusters.reduce((n, c) => n + c.available, 0);
        if (a % 50 === 0)
          log(`${a}/${clusters * pools} Available after ${round((performance.now() - t0) / 1000, 1)} s`);
      });
      log(`converged in ${convergeSeconds} s`);
      const rollouts = await rolloutScenario(fleet, scenario);
      const audit = await auditScenario(fleet);
      return {
        benchmark: 'fleet-ops',
        fleet: { clusters, poolsPerCluster: pools, pools: clusters * pools, kubelet: 'sim', convergeSeconds },
        rollouts,
        audit,
      };
    },
  );
}
