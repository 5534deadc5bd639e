import { describe, expect, it } from 'vitest';
import {
  classifyLeader,
  DEFAULT_PROBE_HEARTBEAT_MS,
  type LeaderObservation,
  MAX_RECENT_OBSERVATIONS,
  probeWriteReason,
  type RecordedLeaderProbe,
  recentObservations,
} from '../../../core/leader/index.ts';

const now = new Date('2026-01-01T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();
const obs = (secondsAgo: number, o: Partial<LeaderObservation> = {}): LeaderObservation => ({
  observedAt: ago(secondsAgo),
  ...o,
});

/** What a probe `secondsAgo` would have recorded of this observation. */
function recorded(observation: LeaderObservation, recent: LeaderObservation[] = [observation]): RecordedLeaderProbe {
  const at = new Date(observation.observedAt);
  return { observation, classification: classifyLeader(recent, at), recent };
}

describe('probeWriteReason', () => {
  const leading = obs(300, { holder: 'a', renewTime: ago(301), transitions: 2 });

  it('writes a pool seen for the first time', () => {
    const o = obs(0, { holder: 'a', renewTime: ago(1) });
    expect(probeWriteReason(undefined, o, classifyLeader([o], now), now)).toBe('first');
  });

  it('does not write a leader that only renewed', () => {
    const o = obs(0, { holder: 'a', renewTime: ago(1), transitions: 2 });
    const c = classifyLeader([leading, o], now);
    expect(c.state).toBe('healthy');
    expect(probeWriteReason(recorded(leading), o, c, now)).toBeUndefined();
  });

  it('writes a new holder, a moved counter, and a changed state', () => {
    const newHolder = obs(0, { holder: 'b', renewTime: ago(1), transitions: 3 });
    expect(probeWriteReason(recorded(leading), newHolder, classifyLeader([leading, newHolder], now), now)).toBe(
      'holder',
    );
    const lost = obs(0, { renewTime: ago(20), transitions: 2 });
    expect(probeWriteReason(recorded(leading), lost, classifyLeader([leading, lost], now), now)).toBe('holder');
    const counted = obs(0, { holder: 'a', renewTime: ago(1), transitions: 4 });
    expect(probeWriteReason(recorded(leading), counted, classifyLeader([leading, counted], now), now)).toBe(
      'transitions',
    );
    // Same holder and counter, but it stopped renewing: healthy → stale.
    const stuck = obs(0, { holder: 'a', renewTime: ago(301), transitions: 2 });
    const stale = classifyLeader([leading, stuck], now);
    expect(stale.state).toBe('stale');
    expect(probeWriteReason(recorded(leading), stuck, stale, now)).toBe('state');
  });

  it('writes an unchanged pool once its heartbeat is due, and not before', () => {
    const day = DEFAULT_PROBE_HEARTBEAT_MS / 1000;
    const old = obs(day, { holder: 'a', renewTime: ago(day + 1), transitions: 2 });
    const o = obs(0, { holder: 'a', renewTime: ago(1), transitions: 2 });
    const c = classifyLeader([old, o], now);
    expect(probeWriteReason(recorded(old), o, c, now)).toBe('heartbeat');
    const almost = obs(day - 1, { holder: 'a', renewTime: ago(day), transitions: 2 });
    expect(probeWriteReason(recorded(almost), o, c, now)).toBeUndefined();
  });
});

describe('recentObservations', () => {
  it('keeps the hour’s observations and the newest one before it, oldest first', () => {
    const kept = recentObservations(
      [obs(7200, { holder: 'a' }), obs(4000, { holder: 'b' }), obs(600, { holder: 'c' })],
      obs(0, { holder: 'd' }),
      now,
    );
    expect(kept.map((o) => o.holder)).toEqual(['b', 'c', 'd']);
  });

  it('keeps the baseline that lets the hour’s first change be counted', () => {
    // One change at 50 minutes ago from a holder last written 70 minutes ago: one transition, not none.
    const before = obs(4200, { holder: 'a', transitions: 1 });
    const change = obs(3000, { holder: 'b', transitions: 2 });
    const recent = recentObservations([before], change, new Date(Date.parse(change.observedAt)));
    const current = obs(0, { holder: 'b', renewTime: ago(1), transitions: 2 });
    expect(classifyLeader([...recent, current], now).transitionsLastHour).toBe(1);
  });

  it('is bounded whatever the history, newest kept, and skips observations from the future', () => {
    const many = Array.from({ length: 200 }, (_, i) => obs(i * 10, { holder: `n${i % 2}` }));
    const kept = recentObservations(many, obs(-60, { holder: 'future' }), now);
    expect(kept).toHaveLength(MAX_RECENT_OBSERVATIONS);
    expect(kept.at(-1)?.observedAt).toBe(ago(0));
    expect(kept.some((o) => o.holder === 'future')).toBe(false);
  });
});
