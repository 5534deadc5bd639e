import { describe, expect, it } from 'vitest';
import { overlapFigures } from '../../../probe/capacity/election.ts';
import { memoryVerdict } from '../../../probe/capacity/verdict.ts';

const MiB = 2 ** 20;
const series = (values: number[]) => values.map((v, t) => ({ t, bytes: v * MiB }));

describe('memoryVerdict', () => {
  it('bounded: the last third stays within the tolerance of the middle third’s peak, below the limit', () => {
    const v = memoryVerdict({
      samples: series([150, 300, 420, 400, 430, 410, 420, 435, 425]),
      limitBytes: 2048 * MiB,
      tolerance: 0.1,
    });
    expect(v).toMatchObject({
      verdict: 'bounded',
      middleThirdMaxBytes: 430 * MiB,
      lastThirdMaxBytes: 435 * MiB,
      peakBytes: 435 * MiB,
    });
  });

  it('growing: the last third climbs past the tolerance', () => {
    const v = memoryVerdict({
      samples: series([150, 200, 250, 300, 350, 400, 450, 500, 550]),
      limitBytes: 2048 * MiB,
      tolerance: 0.1,
    });
    expect(v.verdict).toBe('growing');
    expect(v.reason).toMatch(/last third peaked at 550 MiB, 150 MiB/);
  });

  it('allows one 64 MiB WAL segment of growth even where the tolerance is less (the sawtooth of a bounded etcd)', () => {
    // Measured: db flat, a WAL segment cut in the last second: 593 → 652 MiB is +10 %, but less than one segment.
    const sawtooth = series([273, 334, 464, 466, 517, 566, 593, 555, 577, 556, 564, 652]);
    expect(memoryVerdict({ samples: sawtooth, limitBytes: 2048 * MiB, tolerance: 0.05 }).verdict).toBe('bounded');
    expect(memoryVerdict({ samples: sawtooth, limitBytes: 2048 * MiB, tolerance: 0.05, stepBytes: 0 }).verdict).toBe(
      'growing',
    );
    // The same storm with 1-minute compaction grew by more than a segment: still growing.
    expect(
      memoryVerdict({
        samples: series([270, 292, 319, 358, 471, 529, 622, 564, 581, 592, 712, 778]),
        limitBytes: 2048 * MiB,
        tolerance: 0.1,
      }).verdict,
    ).toBe('growing');
  });

  it('growing: any sample at the container limit, however flat', () => {
    const v = memoryVerdict({ samples: series([600, 600, 600, 600, 600, 600]), limitBytes: 512 * MiB, tolerance: 0.1 });
    expect(v).toMatchObject({ verdict: 'growing', reason: expect.stringMatching(/OOM-killed/) });
  });

  it('judges after the raft log has filled (snapshot-count + 5,000 entries), but counts the limit from the start', () => {
    // RSS climbs for 13 s while the raft log fills (13,000 updates), then holds within ±2 MiB.
    const values = Array.from({ length: 20 }, (_, t) => (t <= 13 ? 270 + 30 * t : 660 + (t % 2 ? 2 : -2)));
    const samples = values.map((v, t) => ({ t, updates: t * 1000, bytes: v * MiB }));
    const strict = { limitBytes: 2048 * MiB, tolerance: 0.02, stepBytes: 0 };
    expect(memoryVerdict({ samples, ...strict }).verdict).toBe('growing'); // the climb reaches the last third
    const v = memoryVerdict({ samples, ...strict, warmupUpdates: 13_000 });
    expect(v).toMatchObject({ verdict: 'bounded', judgedFromSeconds: 13 });
    expect(v.reason).toMatch(/once 13000 updates filled the raft log/);
    // Fewer than 6 samples after the warm-up: the whole series is judged.
    expect(memoryVerdict({ samples, ...strict, warmupUpdates: 15_000 })).toMatchObject({
      verdict: 'growing',
      judgedFromSeconds: 0,
    });
    // The limit counts from the first sample: an OOM kill does not wait for steady state.
    expect(memoryVerdict({ samples, ...strict, limitBytes: 600 * MiB, warmupUpdates: 13_000 }).verdict).toBe('growing');
  });

  it('unknown with fewer than three measured samples', () => {
    expect(
      memoryVerdict({
        samples: [
          { t: 0, bytes: null },
          { t: 1, bytes: 5 },
        ],
        limitBytes: 1,
        tolerance: 0.1,
      }).verdict,
    ).toBe('unknown');
  });
});

describe('overlapFigures', () => {
  const iv = (
    id: string,
    start: number,
    end: number | null,
    expiresAt: number,
    endedBy: 'crash' | 'step-down' | 'stop' | null = 'step-down',
  ) => ({ id, start, end, expiresAt, endedBy });

  it('counts two leaders at once and reports the smallest gap and margin', () => {
    const figures = overlapFigures(
      [iv('a', 0, 1000, 1300), iv('b', 1350, 2000, 2100, 'crash'), iv('c', 2200, null, 9999, null)],
      5000,
    );
    expect(figures).toEqual({ overlaps: 0, smallestGapMs: 200, smallestMarginMs: 100 });
    const overlapping = overlapFigures([iv('a', 0, 1000, 900), iv('b', 950, 2000, 2500)], 3000);
    expect(overlapping).toEqual({ overlaps: 1, smallestGapMs: -50, smallestMarginMs: -100 });
  });

  it('ignores the margin of intervals cut by the end of the run', () => {
    expect(overlapFigures([iv('a', 0, 5000, 100, 'stop')], 5000)).toEqual({
      overlaps: 0,
      smallestGapMs: null,
      smallestMarginMs: null,
    });
  });
});
