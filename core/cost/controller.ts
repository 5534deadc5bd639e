/**
 * The alternative: an always-on controller pod per cluster, priced as the node capacity its requests
 * reserve. The serverless design is charged its forwarder pod per cluster too (it runs in every cluster),
 * so the comparison is like for like: controller pod vs forwarder pod + the cloud side.
 */

import type { UsageProfile } from './counts.ts';
import { type FleetUsage, HOURS_PER_MONTH, monthlyCost } from './model.ts';
import type { RegionPrices } from './prices.ts';

export interface PodRequests {
  cpu: number;
  memoryGiB: number;
  replicas: number;
}

/** infra/cluster/forwarder/deployment.yaml: requests cpu 50m, memory 128Mi, one replica. */
export const FORWARDER_REQUESTS: PodRequests = { cpu: 0.05, memoryGiB: 0.125, replicas: 1 };
/**
 * A controller doing the same work in-cluster: the forwarder's informers plus rendering (PKI, manifests),
 * applies, audits and probes. Assumed 100m / 256Mi, one replica; `--controller-cpu/--controller-memory`
 * change it.
 */
export const CONTROLLER_REQUESTS: PodRequests = { cpu: 0.1, memoryGiB: 0.25, replicas: 1 };

export const podMonthly = (r: PodRequests, p: RegionPrices) =>
  r.replicas * (r.cpu * p.nodeCapacity.vcpuHour + r.memoryGiB * p.nodeCapacity.gibHour) * HOURS_PER_MONTH;

export interface Comparison {
  serverless: { cloud: number; forwarders: number; total: number };
  controller: { total: number; perCluster: number };
  /** Serverless total ÷ controller total (below 1: serverless is cheaper). */
  ratio: number;
  /**
   * Pools per cluster at which the two cost the same, for this many clusters: serverless is cheaper below
   * it. Null when serverless is dearer at every size (its per-cluster cost alone exceeds a controller pod)
   * or costs nothing per pool.
   */
  breakEvenPoolsPerCluster: number | null;
  /** Set when there is no break-even: which one is cheaper at every number of pools per cluster. */
  cheaperAtAnySize: 'serverless' | 'controller' | null;
}

export function compareWithController(
  fleet: FleetUsage,
  profile: UsageProfile,
  prices: RegionPrices,
  controller = CONTROLLER_REQUESTS,
  forwarder = FORWARDER_REQUESTS,
): Comparison {
  const cloud = monthlyCost(fleet, profile, prices).total;
  const forwarders = fleet.clusters * podMonthly(forwarder, prices);
  const controllerTotal = fleet.clusters * podMonthly(controller, prices);
  // The model is linear in pools per cluster: cost(M) = a + b·M; the break-even solves a + b·M = controller.
  const a = monthlyCost({ ...fleet, poolsPerCluster: 0 }, profile, prices).total + forwarders;
  const b = monthlyCost({ ...fleet, poolsPerCluster: 1 }, profile, prices).total + forwarders - a;
  const m = b > 0 && a < controllerTotal ? (controllerTotal - a) / b : null;
  const cheaperAtAnySize = m !== null ? null : a < controllerTotal ? 'serverless' : 'controller';
  return {
    serverless: { cloud, forwarders, total: cloud + forwarders },
    controller: { total: controllerTotal, perCluster: podMonthly(controller, prices) },
    ratio: (cloud + forwarders) / controllerTotal,
    breakEvenPoolsPerCluster: m,
    cheaperAtAnySize,
  };
}
