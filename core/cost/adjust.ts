/**
 * What-ifs on a measured profile: billed durations scaled (the local figures are an upper bound taken on a
 * loaded machine) and the custom metric series per cluster replaced (e.g. 0 when metrics carry no
 * clusterId dimension).
 */
import type { Counts, UsageProfile } from './counts.ts';

export interface ProfileAdjustments {
  durationFactor?: number;
  metricSeriesPerCluster?: number;
}

export function adjustedProfile(p: UsageProfile, a: ProfileAdjustments): UsageProfile {
  const f = a.durationFactor ?? 1;
  const d = (c: Counts): Counts => ({
    ...c,
    billedMs: Object.fromEntries(Object.entries(c.billedMs).map(([k, v]) => [k, (v ?? 0) * f])),
  });
  return {
    ...p,
    newPool: d(p.newPool),
    poolDay: d(p.poolDay),
    idleRolloutTick: d(p.idleRolloutTick),
    audit: { perRun: d(p.audit.perRun), perCluster: d(p.audit.perCluster), perPool: d(p.audit.perPool) },
    probe: { perRun: d(p.probe.perRun), perCluster: d(p.probe.perCluster), perPool: d(p.probe.perPool) },
    rolloutPerPool: d(p.rolloutPerPool),
    metricSeries: { ...p.metricSeries, perCluster: a.metricSeriesPerCluster ?? p.metricSeries.perCluster },
  };
}
