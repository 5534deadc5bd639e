import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hostStealSeconds, stealMeter } from '../../bench/lib/stats.ts';

describe('host steal time (bench/lib/stats.ts)', () => {
  it("reads the steal column of /proc/stat's cpu line, in seconds", async () => {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
    const before = Number(fields[8]) / 100;
    const read = await hostStealSeconds();
    expect(read).toBeGreaterThanOrEqual(before);
    // Steal only grows, by at most the machine's CPUs times the wall time between the two reads.
    const again = await hostStealSeconds();
    expect(again).toBeGreaterThanOrEqual(read!);
  });

  it('gives the seconds stolen over a span and their share of the CPU time, never negative', async () => {
    const meter = await stealMeter();
    const t0 = performance.now();
    let spin = 0;
    while (performance.now() - t0 < 200) spin++;
    const { seconds, share } = await meter.stop((performance.now() - t0) / 1000);
    expect(spin).toBeGreaterThan(0);
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(share).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThanOrEqual(1);
  });
});
