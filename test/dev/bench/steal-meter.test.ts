import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hostStealSeconds, stealMeter } from '../../../dev/bench/lib/stats.ts';

describe('host steal time (dev/bench/lib/stats.ts)', () => {
  it("reads the steal column (the 8th number) of /proc/stat's cpu line, in seconds", async () => {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
    const before = Number(fields[8]) / 100;
    const read = await hostStealSeconds();
    expect(Number.isFinite(read)).toBe(true);
    // The counter only grows; a wrong column (user or idle time) would be far above what was read first.
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read! - before).toBeLessThan(1);
  });

  it('gives the seconds stolen over a span and their share of the machine: steal ÷ (wall × CPUs)', async () => {
    const counter = [100, 103.2];
    const meter = await stealMeter(async () => counter.shift());
    const cpus = availableParallelism();
    expect(await meter.stop(8)).toEqual({ seconds: 3.2, share: Math.round((3.2 / (8 * cpus)) * 1000) / 1000 });
  });

  it('gives nothing where there is no counter', async () => {
    const meter = await stealMeter(async () => undefined);
    expect(await meter.stop(8)).toEqual({});
  });
});
