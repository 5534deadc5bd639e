import { describe, expect, it } from 'vitest';
import { compareWithController } from '../../../core/cost/controller.ts';
import { type Counts, type UsageProfile, zeroCounts } from '../../../core/cost/counts.ts';
import { type FleetUsage, monthlyCost, monthlyCounts } from '../../../core/cost/model.ts';
import { parsePrices, type RegionPrices } from '../../../core/cost/prices.ts';

const c = (parts: Partial<Counts>): Counts => ({ ...zeroCounts(), ...parts });

/** Round figures so the expected totals can be worked out by hand (below). */
const profile: UsageProfile = {
  measuredBy: 'hand-made test profile',
  memoryMb: { reconcile: 512, audit: 1024, rollout: 512, probe: 512, cloudEvents: 512 },
  newPool: zeroCounts(),
  poolDay: zeroCounts(),
  idleRolloutTick: c({ invocations: { rollout: 1 }, billedMs: { rollout: 100 }, readUnits: 1, logBytes: 500 }),
  audit: {
    perRun: c({ invocations: { audit: 1 }, billedMs: { audit: 200 } }),
    perCluster: c({ invocations: { audit: 1 }, billedEvents: 1, ruleMatches: 1 }),
    perPool: c({ billedMs: { audit: 10 }, readUnits: 0.5 }),
  },
  probe: { perRun: zeroCounts(), perCluster: zeroCounts(), perPool: zeroCounts() },
  rolloutPerPool: c({ invocations: { reconcile: 2 }, billedMs: { reconcile: 1000 }, billedEvents: 2, writeUnits: 4 }),
  metricSeries: { fixed: 2, perCluster: 1 },
};

const prices: RegionPrices = {
  lambda: { requestPerMillion: 0.2, gbSecond: 0.00001, architecture: 'arm64' },
  eventBridge: { customEventPerMillion: 1 },
  dynamodb: { readRequestUnitPerMillion: 0.25, writeRequestUnitPerMillion: 1 },
  sqs: { requestPerMillion: 0.4 },
  cloudWatch: { logIngestionPerGb: 0.5, logStoragePerGbMonth: 0.03, customMetricPerMonth: 0.3 },
  nodeCapacity: { vcpuHour: 0.04, gibHour: 0.004, derivedFrom: 'test' },
};

const fleet: FleetUsage = {
  clusters: 2,
  poolsPerCluster: 10,
  auditEveryMinutes: 10,
  probeEveryMinutes: 5,
  rolloutTickEveryMinutes: 1,
  rolloutsPerMonth: 1,
  newPoolsPerMonth: 0,
  logRetentionMonths: 1,
};

describe('monthly cost model', () => {
  it('matches a hand-computed month', () => {
    // A month is 30.4375 days = 43,830 minutes: 43,830 ticks and 4,383 audits.
    //  ticks:    43,830 invocations, 4,383,000 ms × 0.5 GB = 2,191.5 GB-s, 43,830 RRU, 21,915,000 log bytes
    //  audits:   per run 1 + 2 + 0 invocations, 200 + 20 × 10 ms at 1 GB, 2 events, 20 × 0.5 RRU
    //            → 13,149 invocations, 1,753.2 GB-s, 8,766 events, 43,830 RRU
    //  rollout:  20 pools → 40 invocations, 20 s × 0.5 GB = 10 GB-s, 40 events, 80 WRU
    //  metrics:  2 + 2 × 1 = 4 series
    const m = monthlyCost(fleet, profile, prices);
    expect(m.counts.gbSeconds).toBeCloseTo(2191.5 + 1753.2 + 10, 6);
    expect(m.parts.lambdaRequests).toBeCloseTo((57_019 / 1e6) * 0.2, 10);
    expect(m.parts.lambdaDuration).toBeCloseTo(3954.7 * 0.00001, 10);
    expect(m.parts.eventBridge).toBeCloseTo(8806 / 1e6, 10);
    expect(m.parts.dynamodbReads).toBeCloseTo((87_660 / 1e6) * 0.25, 10);
    expect(m.parts.dynamodbWrites).toBeCloseTo(80 / 1e6, 10);
    expect(m.parts.logIngestion).toBeCloseTo(0.021915 * 0.5, 10);
    expect(m.parts.logStorage).toBeCloseTo(0.021915 * 0.03, 10);
    expect(m.parts.customMetrics).toBeCloseTo(1.2, 10);
    expect(m.total).toBeCloseTo(1.29336675, 8);
    expect(m.perPool).toBeCloseTo(1.29336675 / 20, 8);
    const activities = Object.values(m.byActivity).reduce((a, b) => a + b, 0);
    expect(activities).toBeCloseTo(m.total, 10);
  });

  it("counts the scheduled probe's fan-out: one run, one invocation and request per cluster, each pool's time", () => {
    const probe = {
      perRun: c({ invocations: { probe: 1 }, billedMs: { probe: 5 } }),
      perCluster: c({ invocations: { probe: 1 }, billedEvents: 1, ruleMatches: 1 }),
      perPool: c({ billedMs: { probe: 20 }, writeUnits: 2 }),
    };
    const { probes } = monthlyCounts(fleet, { ...profile, probe });
    // 43,830 minutes ÷ 5 = 8,766 runs, each 1 fan-out + 2 cluster invocations, 2 requests, 20 pools.
    expect(probes.invocations).toEqual({ probe: 8766 * 3 });
    expect(probes.billedEvents).toBeCloseTo(8766 * 2, 6);
    expect(probes.ruleMatches).toBeCloseTo(8766 * 2, 6);
    expect(probes.billedMs.probe).toBeCloseTo(8766 * (5 + 20 * 20), 6);
    expect(probes.writeUnits).toBeCloseTo(8766 * 40, 6);
  });

  it('prices the controller pod as node capacity and finds where the two cost the same', () => {
    const cmp = compareWithController(fleet, profile, prices);
    // 730.5 h × (0.1 vCPU × 0.04 + 0.25 GiB × 0.004) = 3.6525 per cluster; the forwarder is half of it.
    expect(cmp.controller.perCluster).toBeCloseTo(3.6525, 10);
    expect(cmp.serverless.forwarders).toBeCloseTo(2 * 1.82625, 10);
    // Serverless is cheaper up to the break-even size and dearer beyond it (its cost grows per pool).
    const m = cmp.breakEvenPoolsPerCluster!;
    expect(m).toBeGreaterThan(0);
    const atBreakEven = compareWithController({ ...fleet, poolsPerCluster: m }, profile, prices);
    expect(atBreakEven.serverless.total).toBeCloseTo(atBreakEven.controller.total, 6);
  });

  it('names the field at fault in a bad prices file', () => {
    expect(() =>
      parsePrices({
        currency: 'USD',
        asOf: '2026-12-02',
        sources: [{ what: 'x', url: 'y', seen: 'z' }],
        regions: { 'us-east-1': { ...prices, lambda: { ...prices.lambda, gbSecond: -1 } } },
      }),
    ).toThrow(/regions\.us-east-1\.lambda\.gbSecond/);
  });
});
