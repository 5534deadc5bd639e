/**
 * When a probe's observation of a pool is worth a write. Most probes see what the last one saw: the same
 * holder renewing the same Lease. Writing those costs two write units a pool every run and says nothing new,
 * so a pool's record changes only when what classification depends on changes (holder, transition
 * counter, state), or when its heartbeat is due: a daily write keeps a live pool's records from expiring
 * and shows the probe still looks at it.
 *
 * Classification needs the last hour of changes, and one observation before it (what the first change in
 * the hour changed from): the pool's latest record carries that window (`recent`), so a probe classifies
 * every pool of a cluster from one read of the cluster's latest records.
 */
import type { LeaderClassification, LeaderObservation } from './classify.ts';
import { LEADER_WINDOW_MS } from './classify.ts';

/** A daily heartbeat: far inside any retention window a record is kept for. */
export const DEFAULT_PROBE_HEARTBEAT_MS = 24 * 3_600_000;

/** More observations than a window of changes can need; bounds the record's size whatever the history. */
export const MAX_RECENT_OBSERVATIONS = 48;

/** What the last write recorded of a pool. */
export interface RecordedLeaderProbe {
  observation: LeaderObservation;
  classification: LeaderClassification;
  /** The changes in the window that ended at the record's observation, oldest first. */
  recent: readonly LeaderObservation[];
}

export type ProbeWriteReason = 'first' | 'holder' | 'transitions' | 'state' | 'heartbeat';

/** Why this observation must be written, or undefined when it repeats what the record already says. */
export function probeWriteReason(
  recorded: RecordedLeaderProbe | undefined,
  observation: LeaderObservation,
  classification: LeaderClassification,
  now: Date,
  heartbeatMs: number = DEFAULT_PROBE_HEARTBEAT_MS,
): ProbeWriteReason | undefined {
  if (!recorded) return 'first';
  if ((recorded.observation.holder ?? '') !== (observation.holder ?? '')) return 'holder';
  if (recorded.observation.transitions !== observation.transitions) return 'transitions';
  if (recorded.classification.state !== classification.state) return 'state';
  const recordedAt = Date.parse(recorded.observation.observedAt);
  if (!(now.getTime() - recordedAt < heartbeatMs)) return 'heartbeat';
  return undefined;
}

/**
 * The observations a pool's record keeps: those inside the classification window at `now`, and the newest
 * one before it, oldest first, at most MAX_RECENT_OBSERVATIONS (the newest kept).
 */
export function recentObservations(
  previous: readonly LeaderObservation[],
  observation: LeaderObservation,
  now: Date,
): LeaderObservation[] {
  const windowStart = now.getTime() - LEADER_WINDOW_MS;
  const sorted = [...previous, observation]
    .map((o) => ({ o, at: Date.parse(o.observedAt) }))
    .filter(({ at }) => Number.isFinite(at) && at <= now.getTime())
    .sort((a, b) => a.at - b.at);
  const firstInside = sorted.findIndex(({ at }) => at >= windowStart);
  const from = firstInside === -1 ? sorted.length - 1 : Math.max(0, firstInside - 1);
  return sorted
    .slice(from)
    .slice(-MAX_RECENT_OBSERVATIONS)
    .map(({ o }) => o);
}
