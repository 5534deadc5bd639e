/**
 * The monthly cost of a fleet on the serverless reconciler: measured counts per unit of work (counts.ts)
 * times how often the work happens in a month, times list prices. Pure arithmetic: no I/O, no clock.
 */
import { addCounts, type Counts, FUNCTIONS, scaleCounts, totalInvocations, type UsageProfile } from './counts.ts';
import type { RegionPrices } from './prices.ts';

/** 365.25 / 12 days: what a "month" is throughout. */
export const DAYS_PER_MONTH = 30.4375;
export const HOURS_PER_MONTH = DAYS_PER_MONTH * 24;
const MINUTES_PER_MONTH = HOURS_PER_MONTH * 60;

export interface FleetUsage {
  clusters: number;
  poolsPerCluster: number;
  /** Audit schedule (serverless.yml: rate(10 minutes)). */
  auditEveryMinutes: number;
  /** Leader probe schedule (serverless.yml: rate(5 minutes)). */
  probeEveryMinutes: number;
  /** Rollout tick schedule (serverless.yml: rate(1 minute)). */
  rolloutTickEveryMinutes: number;
  /** Fleet-wide rollouts a month, each touching every pool. */
  rolloutsPerMonth: number;
  /** Pools created a month (churn). */
  newPoolsPerMonth: number;
  /** CloudWatch log retention in months (serverless.yml: logRetentionDays 30 → ~1). */
  logRetentionMonths: number;
}

export const DEFAULT_USAGE: Omit<FleetUsage, 'clusters' | 'poolsPerCluster'> = {
  auditEveryMinutes: 10,
  probeEveryMinutes: 5,
  rolloutTickEveryMinutes: 1,
  rolloutsPerMonth: 2,
  newPoolsPerMonth: 0,
  logRetentionMonths: 1,
};

export interface CostParts {
  lambdaRequests: number;
  lambdaDuration: number;
  eventBridge: number;
  dynamodbReads: number;
  dynamodbWrites: number;
  sqs: number;
  logIngestion: number;
  logStorage: number;
  customMetrics: number;
}

export interface MonthlyCost {
  total: number;
  perPool: number;
  parts: CostParts;
  /** The same total split by what causes it. */
  byActivity: Record<
    'steadyState' | 'audits' | 'probes' | 'rolloutTicks' | 'rollouts' | 'newPools' | 'customMetrics',
    number
  >;
  /** The month's counts (what the bill would list). */
  counts: Counts & { gbSeconds: number; logGb: number; metricSeries: number };
}

/** The month's counts of each activity for this fleet. */
export function monthlyCounts(
  fleet: FleetUsage,
  profile: UsageProfile,
): Record<Exclude<keyof MonthlyCost['byActivity'], 'customMetrics'>, Counts> {
  const pools = fleet.clusters * fleet.poolsPerCluster;
  const audits = MINUTES_PER_MONTH / fleet.auditEveryMinutes;
  const probes = MINUTES_PER_MONTH / fleet.probeEveryMinutes;
  const ticks = MINUTES_PER_MONTH / fleet.rolloutTickEveryMinutes;
  const perAudit = addCounts(
    profile.audit.perRun,
    scaleCounts(profile.audit.perCluster, fleet.clusters),
    scaleCounts(profile.audit.perPool, pools),
  );
  const perProbe = addCounts(
    profile.probe.perRun,
    scaleCounts(profile.probe.perCluster, fleet.clusters),
    scaleCounts(profile.probe.perPool, pools),
  );
  return {
    steadyState: scaleCounts(profile.poolDay, pools * DAYS_PER_MONTH),
    audits: scaleCounts(perAudit, audits),
    probes: scaleCounts(perProbe, probes),
    rolloutTicks: scaleCounts(profile.idleRolloutTick, ticks),
    rollouts: scaleCounts(profile.rolloutPerPool, pools * fleet.rolloutsPerMonth),
    newPools: scaleCounts(profile.newPool, fleet.newPoolsPerMonth),
  };
}

/** Prices one set of counts (custom metrics are priced separately: they are series, not counts). */
export function priceCounts(
  c: Counts,
  memoryMb: UsageProfile['memoryMb'],
  p: RegionPrices,
  logRetentionMonths: number,
): Omit<CostParts, 'customMetrics'> & { gbSeconds: number; logGb: number } {
  const gbSeconds = FUNCTIONS.reduce((n, fn) => n + ((c.billedMs[fn] ?? 0) / 1000) * (memoryMb[fn] / 1024), 0);
  const logGb = c.logBytes / 1e9;
  return {
    gbSeconds,
    logGb,
    lambdaRequests: (totalInvocations(c) / 1e6) * p.lambda.requestPerMillion,
    lambdaDuration: gbSeconds * p.lambda.gbSecond,
    eventBridge: (c.billedEvents / 1e6) * p.eventBridge.customEventPerMillion,
    dynamodbReads: (c.readUnits / 1e6) * p.dynamodb.readRequestUnitPerMillion,
    dynamodbWrites: (c.writeUnits / 1e6) * p.dynamodb.writeRequestUnitPerMillion,
    sqs: (c.sqsMessages / 1e6) * p.sqs.requestPerMillion,
    logIngestion: logGb * p.cloudWatch.logIngestionPerGb,
    // Steady state: a month's ingestion kept for the retention period.
    logStorage: logGb * logRetentionMonths * p.cloudWatch.logStoragePerGbMonth,
  };
}

const sumParts = (parts: Omit<CostParts, 'customMetrics'>) =>
  parts.lambdaRequests +
  parts.lambdaDuration +
  parts.eventBridge +
  parts.dynamodbReads +
  parts.dynamodbWrites +
  parts.sqs +
  parts.logIngestion +
  parts.logStorage;

export function monthlyCost(fleet: FleetUsage, profile: UsageProfile, prices: RegionPrices): MonthlyCost {
  const activities = monthlyCounts(fleet, profile);
  const all = addCounts(...Object.values(activities));
  const { gbSeconds, logGb, ...parts } = priceCounts(all, profile.memoryMb, prices, fleet.logRetentionMonths);
  const metricSeries = profile.metricSeries.fixed + profile.metricSeries.perCluster * fleet.clusters;
  const customMetrics = metricSeries * prices.cloudWatch.customMetricPerMonth;
  const byActivity = Object.fromEntries(
    Object.entries(activities).map(([k, c]) => [
      k,
      sumParts(priceCounts(c, profile.memoryMb, prices, fleet.logRetentionMonths)),
    ]),
  ) as Omit<MonthlyCost['byActivity'], 'customMetrics'>;
  const total = sumParts(parts) + customMetrics;
  const pools = fleet.clusters * fleet.poolsPerCluster;
  return {
    total,
    perPool: pools ? total / pools : 0,
    parts: { ...parts, customMetrics },
    byActivity: { ...byActivity, customMetrics },
    counts: { ...all, gbSeconds, logGb, metricSeries },
  };
}
