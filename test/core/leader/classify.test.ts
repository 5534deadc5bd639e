import { describe, expect, it } from 'vitest';
import { classifyLeader, type LeaderObservation } from '../../../core/leader/index.ts';

const now = new Date('2026-01-01T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();
const obs = (secondsAgo: number, o: Partial<LeaderObservation> = {}): LeaderObservation => ({
  observedAt: ago(secondsAgo),
  ...o,
});

describe('classifyLeader', () => {
  it('healthy: a holder that renewed within the lease duration', () => {
    const c = classifyLeader([obs(0, { holder: 'node-a', renewTime: ago(3), transitions: 2 })], now);
    expect(c).toMatchObject({ state: 'healthy', holder: 'node-a', renewAgeSeconds: 3, transitionsLastHour: 0 });
    expect(c.reason).toMatch(/node-a leads/);
  });

  it('no-leader: nobody has held the Lease for longer than the lease duration', () => {
    const c = classifyLeader([obs(300), obs(0)], now);
    expect(c).toMatchObject({ state: 'no-leader', noLeaderSeconds: 300 });
    expect(c.reason).toMatch(/for 300 s/);
    // A released Lease keeps its renewTime: without a holder since then.
    expect(classifyLeader([obs(0, { renewTime: ago(40) })], now)).toMatchObject({
      state: 'no-leader',
      noLeaderSeconds: 40,
    });
    // An earlier holder ends the holder-less run: it counts from the first observation without one.
    expect(
      classifyLeader([obs(600), obs(300, { holder: 'node-a', renewTime: ago(301) }), obs(120), obs(0)], now),
    ).toMatchObject({ state: 'no-leader', noLeaderSeconds: 120 });
    expect(classifyLeader([], now).state).toBe('no-leader');
  });

  it('an election in progress (no holder yet, within the lease duration) is not an outage', () => {
    expect(classifyLeader([obs(0, { renewTime: ago(5) })], now)).toMatchObject({
      state: 'healthy',
      noLeaderSeconds: 5,
    });
    expect(classifyLeader([obs(0)], now)).toMatchObject({ state: 'healthy', noLeaderSeconds: 0 });
  });

  it('stale: the holder’s renewTime is older than the lease duration (plus the configured grace)', () => {
    const stale = [obs(0, { holder: 'node-a', renewTime: ago(20) })];
    expect(classifyLeader(stale, now)).toMatchObject({ state: 'stale', holder: 'node-a', renewAgeSeconds: 20 });
    expect(classifyLeader(stale, now, { staleGraceSeconds: 45 }).state).toBe('healthy');
    expect(
      classifyLeader([obs(0, { holder: 'node-a', renewTime: ago(61) })], now, { staleGraceSeconds: 45 }).state,
    ).toBe('stale');
    expect(classifyLeader([obs(0, { holder: 'node-a' })], now)).toMatchObject({
      state: 'stale',
      reason: expect.stringMatching(/unknown time/),
    });
  });

  it('flapping: more transitions in the last hour than the threshold, from the counter', () => {
    const series = [
      obs(3000, { holder: 'a', renewTime: ago(3001), transitions: 10 }),
      obs(0, { holder: 'b', renewTime: ago(1), transitions: 17 }),
    ];
    expect(classifyLeader(series, now)).toMatchObject({ state: 'flapping', transitionsLastHour: 7 });
    expect(classifyLeader(series, now, { maxTransitionsPerHour: 7 }).state).toBe('healthy');
  });

  it('counts only the last hour, survives a counter reset (re-seeded etcd), and falls back to holder changes', () => {
    // 20 transitions happened before the window: not flapping now.
    const old = [
      obs(7200, { holder: 'a', renewTime: ago(7200), transitions: 0 }),
      obs(3700, { holder: 'a', renewTime: ago(3700), transitions: 20 }),
      obs(0, { holder: 'a', renewTime: ago(1), transitions: 20 }),
    ];
    expect(classifyLeader(old, now)).toMatchObject({ state: 'healthy', transitionsLastHour: 0 });
    // The counter restarted at 0 after a re-seed, then counted 8.
    const reset = [
      obs(1800, { holder: 'a', renewTime: ago(1800), transitions: 30 }),
      obs(0, { holder: 'b', renewTime: ago(1), transitions: 8 }),
    ];
    expect(classifyLeader(reset, now)).toMatchObject({ state: 'flapping', transitionsLastHour: 8 });
    // No counters reported: every change of holder between observations counts.
    const holders = ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b'].map((h, i) =>
      obs(3500 - i * 500, { holder: h, renewTime: ago(Math.max(0, 3500 - i * 500 - 1)) }),
    );
    expect(classifyLeader(holders, now)).toMatchObject({ state: 'flapping', transitionsLastHour: 7 });
  });

  it('ranks no-leader and stale above flapping', () => {
    const churn = [
      obs(3000, { holder: 'a', renewTime: ago(3000), transitions: 0 }),
      obs(600, { transitions: 50 }),
      obs(0, { transitions: 50 }),
    ];
    expect(classifyLeader(churn, now).state).toBe('no-leader');
    const staleChurn = [
      obs(3000, { holder: 'a', renewTime: ago(3000), transitions: 0 }),
      obs(0, { holder: 'b', renewTime: ago(100), transitions: 50 }),
    ];
    expect(classifyLeader(staleChurn, now).state).toBe('stale');
  });

  it('ignores observations from the future and in any order', () => {
    const c = classifyLeader(
      [
        obs(-60, { holder: 'x' }),
        obs(0, { holder: 'a', renewTime: ago(2) }),
        obs(60, { holder: 'a', renewTime: ago(61) }),
      ],
      now,
    );
    expect(c).toMatchObject({ state: 'healthy', holder: 'a' });
  });
});
