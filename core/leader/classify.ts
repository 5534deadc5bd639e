/**
 * Classification of a pool's YurtHub leader election from observations of what the agent reported
 * (PoolSpirit `status.leader`: holder, renewTime, transitions), taken by the `probe` function over time.
 *
 * Order of severity: no-leader > stale > flapping > healthy — a pool without a leader is the outage; a
 * stale one probably is; flapping is churn that still elects someone.
 */

export interface LeaderObservation {
  /** When the probe read the status (ISO 8601). */
  observedAt: string;
  /** Node holding the Lease; absent or empty when nobody does (or the agent reported nothing). */
  holder?: string;
  /** The Lease's renewTime as the agent reported it. */
  renewTime?: string;
  /** The Lease's leaseTransitions counter (restarts from 0 when the in-memory etcd is re-seeded). */
  transitions?: number;
}

export interface LeaderThresholds {
  /** YurtHub's lease duration. */
  leaseDurationSeconds: number;
  /**
   * Added to the lease duration before a renewTime counts as stale: the agent reports the Lease into the
   * PoolSpirit status periodically, so a healthy renewTime can look older by up to its report interval.
   */
  staleGraceSeconds: number;
  /** More transitions than this in the last hour is flapping. */
  maxTransitionsPerHour: number;
}

export const DEFAULT_LEADER_THRESHOLDS: LeaderThresholds = {
  leaseDurationSeconds: 15,
  staleGraceSeconds: 0,
  maxTransitionsPerHour: 6,
};

export const LEADER_STATES = ['healthy', 'no-leader', 'stale', 'flapping'] as const;
export type LeaderState = (typeof LEADER_STATES)[number];

export interface LeaderClassification {
  state: LeaderState;
  /** One sentence a person can act on. */
  reason: string;
  holder?: string;
  /** Seconds since the holder last renewed (at `now`). */
  renewAgeSeconds?: number;
  /** Seconds the pool has been seen without a holder. */
  noLeaderSeconds?: number;
  /** Leadership changes within the last hour (from the counter, or from holder changes seen). */
  transitionsLastHour: number;
}

/** The window flapping is judged over: transitions in the last hour. */
export const LEADER_WINDOW_MS = 3_600_000;

/** Classifies at `now`; `observations` may be in any order and include the one just taken. */
export function classifyLeader(
  observations: readonly LeaderObservation[],
  now: Date,
  thresholds: Partial<LeaderThresholds> = {},
): LeaderClassification {
  const t = { ...DEFAULT_LEADER_THRESHOLDS, ...thresholds };
  const nowMs = now.getTime();
  const sorted = observations
    .map((o) => ({ ...o, at: Date.parse(o.observedAt) }))
    .filter((o) => Number.isFinite(o.at) && o.at <= nowMs)
    .sort((a, b) => a.at - b.at);
  // The newest observation before the window is what the window's first change changed from: without it, a
  // history that keeps only changes would miss the first transition of every hour.
  const firstInside = sorted.findIndex((o) => o.at >= nowMs - LEADER_WINDOW_MS);
  const transitionsLastHour = firstInside === -1 ? 0 : countTransitions(sorted.slice(Math.max(0, firstInside - 1)));
  const latest = sorted.at(-1);
  if (!latest) {
    return {
      state: 'no-leader',
      reason: 'no leader observation yet: the agent has not reported the yurthub Lease',
      transitionsLastHour: 0,
    };
  }

  if (!latest.holder) {
    // Without a holder since the earliest observation of the current holder-less run, or since the last
    // renewal the Lease still shows (a released Lease keeps its renewTime).
    let since = latest.at;
    for (const earlier of [...sorted].reverse()) {
      if (earlier.holder) break;
      since = earlier.at;
    }
    const renewed = Date.parse(latest.renewTime ?? '');
    if (Number.isFinite(renewed)) since = Math.min(since, renewed);
    const noLeaderSeconds = round((nowMs - since) / 1000);
    if (noLeaderSeconds > t.leaseDurationSeconds) {
      return {
        state: 'no-leader',
        reason: `no YurtHub has held the leader Lease for ${noLeaderSeconds} s (lease duration ${t.leaseDurationSeconds} s)`,
        noLeaderSeconds,
        transitionsLastHour,
      };
    }
    return {
      ...flappingOr(
        t,
        transitionsLastHour,
        `no holder for ${noLeaderSeconds} s, within the ${t.leaseDurationSeconds} s lease duration: an election is in progress`,
      ),
      noLeaderSeconds,
    };
  }

  const renewed = Date.parse(latest.renewTime ?? '');
  const renewAgeSeconds = Number.isFinite(renewed) ? round((nowMs - renewed) / 1000) : undefined;
  const staleAfter = t.leaseDurationSeconds + t.staleGraceSeconds;
  if (renewAgeSeconds === undefined || renewAgeSeconds > staleAfter) {
    const age = renewAgeSeconds === undefined ? 'at an unknown time' : `${renewAgeSeconds} s ago`;
    return {
      state: 'stale',
      reason: `leader ${latest.holder} last renewed ${age} (stale after ${staleAfter} s)`,
      holder: latest.holder,
      renewAgeSeconds,
      transitionsLastHour,
    };
  }
  return {
    ...flappingOr(t, transitionsLastHour, `${latest.holder} leads, renewed ${renewAgeSeconds} s ago`),
    holder: latest.holder,
    renewAgeSeconds,
  };
}

function flappingOr(t: LeaderThresholds, transitionsLastHour: number, healthyReason: string): LeaderClassification {
  if (transitionsLastHour > t.maxTransitionsPerHour) {
    return {
      state: 'flapping',
      reason: `${transitionsLastHour} leader transitions in the last hour (more than ${t.maxTransitionsPerHour})`,
      transitionsLastHour,
    };
  }
  return { state: 'healthy', reason: healthyReason, transitionsLastHour };
}

/**
 * Transitions between consecutive observations: the counter's increase when both carry it (a decrease
 * means etcd was re-seeded and counts from 0 again), else 1 per change of a non-empty holder. Never fewer
 * than the holder changes seen: a counter can only under-count.
 */
function countTransitions(window: ReadonlyArray<LeaderObservation & { at: number }>): number {
  let total = 0;
  for (const [i, cur] of window.entries()) {
    const prev = window[i - 1];
    if (!prev) continue;
    const holderChanged = cur.holder && prev.holder && cur.holder !== prev.holder ? 1 : 0;
    let counted = holderChanged;
    if (typeof prev.transitions === 'number' && typeof cur.transitions === 'number') {
      counted = cur.transitions >= prev.transitions ? cur.transitions - prev.transitions : cur.transitions;
    }
    total += Math.max(counted, holderChanged);
  }
  return total;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
