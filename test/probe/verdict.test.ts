import { describe, expect, it } from 'vitest';
import { memoryVerdict } from '../../probe/capacity/verdict.ts';
import { overlapFigures } from '../../probe/capacity/election.ts';

const MiB = 2 ** 20;
const series = (values: number[]) => values.map((v, t) => ({ t, bytes: v * MiB }));

describe('memoryVerdict', () => {
  it('bounded: the last third stays within the tolerance of the middle third’s peak, below the limit', () => {
    const v = memoryVerdict({ samples: series([150, 300, 420, 400, 430, 410, 420, 435, 425]), limitBytes: 2048 * MiB, tolerance: 0.1 });
    expect(v).toMatchObject({ verdict: 'bounded', middleThirdMaxBytes: 430 * MiB, lastThirdMaxBytes: 435 * MiB, peakBytes: 435 * MiB });
  });

  it('growing: the last third climbs past the tolerance', () => {
    const v = memoryVerdict({ samples: series([150, 200, 250, 300, 350, 400, 450, 500, 550]), limitBytes: 2048 * MiB, tolerance: 0.1 });
    expect(v.verdict).toBe('growing');
    expect(v.reason).toMatch(/last third peaked at 550 MiB/);
  });

  it('growing: any sample at the container limit, however flat', () => {
    const v = memoryVerdict({ samples: series([600, 600, 600, 600, 600, 600]), limitBytes: 512 * MiB, tolerance: 0.1 });
    expect(v).toMatchObject({ verdict: 'growing', reason: expect.stringMatching(/OOM-killed/) });
  });

  it('unknown with fewer than three measured samples', () => {
    expect(memoryVerdict({ samples: [{ t: 0, bytes: null }, { t: 1, bytes: 5 }], limitBytes: 1, tolerance: 0.1 }).verdict).toBe('unknown');
  });
});

describe('overlapFigures', () => {
  const iv = (id: string, start: number, end: number | null, expiresAt: number, endedBy: 'crash' | 'step-down' | 'stop' | null = 'step-down') => ({ id, start, end, expiresAt, endedBy });

  it('counts two leaders at once and reports the smallest gap and margin', () => {
    const figures = overlapFigures([iv('a', 0, 1000, 1300), iv('b', 1350, 2000, 2100, 'crash'), iv('c', 2200, null, 9999, null)], 5000);
    expect(figures).toEqual({ overlaps: 0, smallestGapMs: 200, smallestMarginMs: 100 });
    const overlapping = overlapFigures([iv('a', 0, 1000, 900), iv('b', 950, 2000, 2500)], 3000);
    expect(overlapping).toEqual({ overlaps: 1, smallestGapMs: -50, smallestMarginMs: -100 });
  });

  it('ignores the margin of intervals cut by the end of the run', () => {
    expect(overlapFigures([iv('a', 0, 5000, 100, 'stop')], 5000)).toEqual({ overlaps: 0, smallestGapMs: null, smallestMarginMs: null });
  });
});
