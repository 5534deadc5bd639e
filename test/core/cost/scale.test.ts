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
  probe: { perRun: zeroCounts(), perCluster: zeroCounts(), perPool: c({ billedMs: { probe: 100 } }) },
  rolloutPerPool: c({ invocations: { reconcile: 9 }, billedMs: { reconcile: 18_000 }, writeUnits: 27 }),
  metricSeries: { fixed: 0, perCluster: 0 },
  sizes: { rolloutProgressItemBytes: 400, putEventsEntriesPerCall: 1 },
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
    // Probe, fanned out: one cluster's 20 pools × 0.1 s = 2 s of its 120 s timeout, however many clusters.
    expect(byId['probe-run-timeout'].atFleet).toBeCloseTo(2, 6);
    expect(byId['probe-run-timeout'].reachedAtClusters).toBeNull();
    expect(byId['probe-run-timeout'].how).toMatch(/at most 1200 pools per cluster/);
    expect(byId['probe-run-timeout'].how).toMatch(/50 PutEvents calls of up to 10 requests/);
    // Its fleet pass: ceil(500 / 4 slots) = 125 rounds × 2 s = 250 s of the 300 s between ticks
    // (the schedule, under the 900 s maximumEventAge); reached at 300 s × 4 ÷ 2 s = 600 clusters.
    expect(byId['probe-fan-out'].limit.value).toBe(300);
    expect(byId['probe-fan-out'].atFleet).toBeCloseTo(250, 6);
    expect(byId['probe-fan-out'].reachedAtClusters).toBeCloseTo(600, 6);
    expect(byId['probe-fan-out'].reachedAtPools).toBeCloseTo(12_000, 6);
    // Reconcile backlog: 3,600 s × 20 ÷ (25% × 20 pools × 9 reconciles × 2 s) = 800 clusters.
    expect(byId['reconcile-backlog'].reachedAtClusters).toBeCloseTo(800, 6);
    // A fleet-wide rollout transition: 400-byte items, 2 write units per cluster; 300 s × 1,000 units/s ÷ 2.
    expect(byId['rollout-fleet-transition'].reachedAtClusters).toBeCloseTo(150_000, 6);
    // 500 clusters × 2 units ÷ 1,000 units/s.
    expect(byId['rollout-fleet-transition'].atFleet).toBeCloseTo(1, 6);
    expect(byId['rollout-fleet-transition'].how).toMatch(/49 read units/);
    // Audit: 600 s × 10 at a time ÷ (20 pools × 0.1 s) = 3,000 clusters.
    expect(byId['audit-fan-out'].reachedAtClusters).toBeCloseTo(3000, 6);
    expect(limits.slice(0, 3).map((l) => l.id)).toEqual(['probe-fan-out', 'reconcile-backlog', 'audit-fan-out']);
    // Not growing with the fleet: last, with no fleet size.
    expect(byId['lambda-concurrency'].reachedAtPools).toBeNull();
    expect(byId['lambda-concurrency'].atFleet).toBe(46);
  });

  it("counts what a cluster's audit and probe cost whatever its pools, besides what each pool adds", () => {
    const withClusterPart: UsageProfile = {
      ...profile,
      audit: { ...profile.audit, perCluster: c({ billedMs: { audit: 1000 } }) },
      probe: { ...profile.probe, perCluster: c({ billedMs: { probe: 2000 } }) },
    };
    const byId = Object.fromEntries(
      scaleLimits({ clusters: 500, poolsPerCluster: 20, profile: withClusterPart, functions }).map((l) => [l.id, l]),
    );
    // A cluster's probe: 2 s + 20 pools × 0.1 s = 4 s; at most (120 s - 2 s) ÷ 0.1 s pools in its timeout.
    expect(byId['probe-run-timeout'].atFleet).toBeCloseTo(4, 6);
    expect(byId['probe-run-timeout'].how).toMatch(/at most 1180 pools per cluster/);
    // Its fleet pass: 125 rounds × 4 s; reached at 300 s × 4 ÷ 4 s = 300 clusters.
    expect(byId['probe-fan-out'].atFleet).toBeCloseTo(500, 6);
    expect(byId['probe-fan-out'].reachedAtClusters).toBeCloseTo(300, 6);
    // A cluster's audit: 1 s + 20 × 0.1 s = 3 s; ceil(500 ÷ 10) × 3 s; reached at 600 s × 10 ÷ 3 s.
    expect(byId['audit-fan-out'].atFleet).toBeCloseTo(150, 6);
    expect(byId['audit-fan-out'].reachedAtClusters).toBeCloseTo(2000, 6);
    expect(byId['audit-fan-out'].how).toMatch(/1000 ms a cluster and 100 ms per pool.*at most 2990 pools per cluster/);
    // A per-pool time below what the bench resolves bounds no cluster's pools.
    const noPoolTime = scaleLimits({
      clusters: 500,
      poolsPerCluster: 20,
      profile: { ...withClusterPart, probe: { ...withClusterPart.probe, perPool: zeroCounts() } },
      functions,
    }).find((l) => l.id === 'probe-run-timeout')!;
    expect(noPoolTime.atFleet).toBeCloseTo(2, 6);
    expect(noPoolTime.how).toMatch(/its pools add no time the bench resolves/);
  });

  it("bounds the probe's fleet pass by the sooner of the schedule and the event age", () => {
    const limit = (maximumEventAgeSeconds: number, probeEverySeconds?: number) =>
      scaleLimits({
        clusters: 500,
        poolsPerCluster: 20,
        profile,
        functions: { ...functions, probe: fn(4, 120, maximumEventAgeSeconds) },
        ...(probeEverySeconds ? { settings: { probeEverySeconds } } : {}),
      }).find((l) => l.id === 'probe-fan-out')!;
    expect(limit(120).limit.value).toBe(120);
    expect(limit(120).reachedAtClusters).toBeCloseTo(240, 6);
    expect(limit(3600, 900).limit.value).toBe(900);
  });
});
