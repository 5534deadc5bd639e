import { describe, expect, it } from 'vitest';
import { reportForStorage, StoredReportTooLargeError } from '../../../probe/capacity/stored-report.ts';

const sample = (t: number, ws: number) => ({ t, pod: { workingSetBytes: ws }, padding: 'x'.repeat(500) });

describe('the capacity report as the state table stores it', () => {
  it('is stored whole when it fits', () => {
    const report = { patchStorm: { product: { storm: { samples: [sample(0, 1), sample(1, 2)] } }, upstream: null } };
    expect(reportForStorage(report)).toEqual({ report, samples: null });
  });

  it('keeps every k-th sample of a long storm, its first, last and highest, with the smallest k that fits', () => {
    const samples = Array.from({ length: 1001 }, (_, t) => sample(t, t === 333 ? 9_999 : 100 + (t % 7)));
    const report = { kind: 'x', patchStorm: { product: { storm: { samples, updates: 5 } }, upstream: null } };
    const whole = Buffer.byteLength(JSON.stringify(report));
    const { report: stored, samples: meta } = reportForStorage(report, Math.floor(whole / 3));
    expect(meta).toEqual({ every: 4, kept: 252, taken: 1001 });
    const kept = stored.patchStorm.product!.storm.samples.map((s) => s.t);
    expect(kept.slice(0, 3)).toEqual([0, 4, 8]);
    expect(kept).toContain(333);
    expect(kept.at(-1)).toBe(1000);
    expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThanOrEqual(Math.floor(whole / 3));
    // The rest of the report, and the report itself, are untouched.
    expect(stored.patchStorm.product!.storm.updates).toBe(5);
    expect(report.patchStorm.product.storm.samples).toHaveLength(1001);
  });

  it('refuses, naming the limit, a report that cannot fit however its samples are thinned', () => {
    const report = { big: 'y'.repeat(2000), patchStorm: { product: { storm: { samples: [sample(0, 1)] } } } };
    expect(() => reportForStorage(report, 1000)).toThrow(StoredReportTooLargeError);
    expect(() => reportForStorage(report, 1000)).toThrow(/above the 1000 a table item can hold/);
  });
});
