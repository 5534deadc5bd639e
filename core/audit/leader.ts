import type { PoolSpiritStatus } from '../poolspirit/api.ts';
import { duration } from './text.ts';
import type { AuditThresholds, Finding, LeaderSample, ProbeRecord } from './types.ts';

const PROBE_VERDICTS: Record<string, 'no-leader' | 'stale-leader' | 'flapping-leader'> = {
  'no-leader': 'no-leader',
  stale: 'stale-leader',
  'stale-leader': 'stale-leader',
  flapping: 'flapping-leader',
  'flapping-leader': 'flapping-leader',
};

/**
 * YurtHub leader election of a pool, judged from what the agent reports in status.leader, the probe's
 * verdict when a probe record exists, and the transition count over time (flapping). None of these is
 * fixable by a reconcile: the pool's YurtHubs elect the leader; a person has to look at the nodes.
 */
export function leaderFindings(
  cluster: string,
  pool: string,
  status: PoolSpiritStatus | undefined,
  history: LeaderSample[] | undefined,
  probe: ProbeRecord | undefined,
  now: Date,
  t: AuditThresholds,
): Finding[] {
  const base = { cluster, pool, fixable: false as const };
  const findings: Finding[] = [];
  const verdict = probe?.classification ? PROBE_VERDICTS[probe.classification] : undefined;
  if (probe && verdict) {
    findings.push({
      ...base,
      severity: 'warning',
      kind: verdict,
      reason: `leader probe at ${probe.observedAt} classified the pool as ${probe.classification}${probe.reason ? `: ${probe.reason}` : probe.holder ? ` (holder ${probe.holder})` : ''}`,
    });
  }
  const leader = status?.leader;
  if (!leader?.holder) {
    if (verdict !== 'no-leader') {
      findings.push({
        ...base,
        severity: 'warning',
        kind: 'no-leader',
        reason:
          'no YurtHub holds the kube-system/yurthub leader Lease: the pool shares no cache while the cloud is unreachable',
      });
    }
    return findings;
  }
  const renewed = Date.parse(leader.renewTime ?? '');
  const age = now.getTime() - renewed;
  if ((!Number.isFinite(age) || age > t.leaderStaleAfterMs) && verdict !== 'stale-leader') {
    findings.push({
      ...base,
      severity: 'warning',
      kind: 'stale-leader',
      reason: `leader ${leader.holder} last renewed ${Number.isFinite(age) ? `${duration(age)} ago` : 'at an unknown time'} (stale after ${duration(t.leaderStaleAfterMs)})`,
    });
  }
  const flaps = transitionsWithin(history ?? [], leader.transitions, now, t.flappingWindowMs);
  if (flaps !== undefined && flaps >= t.flappingTransitions && verdict !== 'flapping-leader') {
    findings.push({
      ...base,
      severity: 'warning',
      kind: 'flapping-leader',
      reason: `leader changed ${flaps} times in the last ${duration(t.flappingWindowMs)} (now ${leader.holder}): YurtHubs keep losing the Lease`,
    });
  }
  return findings;
}

/** Leader transitions between the oldest sample inside the window and now (undefined without data). */
function transitionsWithin(
  history: LeaderSample[],
  current: number | undefined,
  now: Date,
  windowMs: number,
): number | undefined {
  if (current === undefined) return undefined;
  const from = now.getTime() - windowMs;
  const inWindow = history
    .map((s) => (Date.parse(s.at) >= from ? s.transitions : undefined))
    .filter((transitions) => typeof transitions === 'number');
  if (inWindow.length === 0) return undefined;
  const oldest = Math.min(...inWindow);
  // A counter that went down means the Lease was recreated: count from zero.
  return current >= oldest ? current - oldest : current;
}
