import { describe, expect, it } from 'vitest';
import { type Counts, type UsageProfile, zeroCounts } from '../../../core/cost/counts.ts';
import { scaleLimits } from '../../../core/cost/scale.ts';

const c = (parts: Partial<Counts>): Counts => ({ ...zeroCounts(), ...parts });
const profile: UsageProfile = {
  measuredBy: 'hand-made',
  memoryMb: { reconcile: 512, audit: 1024, rollout: 512, probe: 512, cloudEvents: 512 },
  newPool: zeroCounts(),
  poolDay: zeroCounts(),
  idleRolloutTick: zeroCounts(),
  audit: { perRun: zeroCounts(), perCluster: zeroCounts(), perPool: c({ billedMs: { audit: 100 } }) },
  probe: { perRun: zeroCounts(), perPool: c({ billedMs: { probe: 100 } }) },
  rolloutPerPool: c({ invocations: { reconcile: 9 }, billedMs: { reconcile: 18_000 }, writeUnits: 27 }),
  metricSeries: { fixed: 0, perCluster: 0 },
  sizes: { measuredClusters: 1, rolloutProgressItemBytes: 400, putEventsEntriesPerCall: 1 },
};
const fn = (reservedConcurrency: number, timeoutSeconds: number, maximumEventAgeSeconds: number) => ({
  reservedConcurrency,
  timeoutSeconds,
  maximumEventAgeSeconds,
});
const functions = {
  reconcile: fn(20, 60, 3600),
  audit: fn(10, 300, 600),
  rollout: fn(2, 300, 120),
  probe: fn(4, 120, 900),
  cloudEvents: fn(10, 60, 300),
};

describe('scale limits', () => {
  it('finds the fleet size at which each limit is reached, first reached first', () => {
    const limits = scaleLimits({ clusters: 500, poolsPerCluster: 20, profile, functions });
    const byId = Object.fromEntries(limits.map((l) => [l.id, l]));
    // Probe: 120 s × 4 clusters at a time ÷ (20 pools × 100 ms) = 240 clusters.
    expect(byId['probe-run-timeout'].reachedAtClusters).toBeCloseTo(240, 6);
    expect(byId['probe-run-timeout'].reachedAtPools).toBeCloseTo(4800, 6);
    // 500 clusters: ceil(500 / 4) = 125 rounds × 20 pools × 0.1 s = 250 s of a 120 s timeout.
    expect(byId['probe-run-timeout'].atFleet).toBeCloseTo(250, 6);
    // Reconcile backlog: 3,600 s × 20 ÷ (25% × 20 pools × 9 reconciles × 2 s) = 800 clusters.
    expect(byId['reconcile-backlog'].reachedAtClusters).toBeCloseTo(800, 6);
    // A fleet-wide rollout transition: 400-byte items, 2 write units per cluster; 300 s × 1,000 units/s ÷ 2.
    expect(byId['rollout-fleet-transition'].reachedAtClusters).toBeCloseTo(150_000, 6);
    // 500 clusters × 2 units ÷ 1,000 units/s.
    expect(byId['rollout-fleet-transition'].atFleet).toBeCloseTo(1, 6);
    expect(byId['rollout-fleet-transition'].how).toMatch(/49 read units/);
    // Audit: 600 s × 10 at a time ÷ (20 pools × 0.1 s) = 3,000 clusters.
    expect(byId['audit-fan-out'].reachedAtClusters).toBeCloseTo(3000, 6);
    expect(limits.slice(0, 3).map((l) => l.id)).toEqual(['probe-run-timeout', 'reconcile-backlog', 'audit-fan-out']);
    // Not growing with the fleet: last, with no fleet size.
    expect(byId['lambda-concurrency'].reachedAtPools).toBeNull();
    expect(byId['lambda-concurrency'].atFleet).toBe(46);
  });
});
