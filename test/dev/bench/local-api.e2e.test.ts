import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { median, percentile } from '../../../dev/bench/lib/stats.ts';
import { measureWriteFloor, type WriteFloorOptions } from '../../../dev/bench/local-api.ts';

const run = promisify(execFile);

describe('bench helpers', () => {
  it('computes medians and nearest-rank percentiles', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
  });
});

describe('npm run bench', () => {
  it('rejects an unknown benchmark name and lists the known ones', async () => {
    const err = await run(process.execPath, ['dev/bench/run.ts', 'no-such-bench']).catch((e) => e);
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('unknown benchmark "no-such-bench"');
    expect(err.stderr).toContain('local-api');
  });

  it('rejects bad options of local-api clearly', async () => {
    const err = await run(process.execPath, ['dev/bench/run.ts', 'local-api', '--repeats', 'zero']).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stderr).toContain('--repeats expects a positive integer, got "zero"');
    const warmup = await run(process.execPath, ['dev/bench/run.ts', 'local-api', '--warmup', '-1']).catch((e) => e);
    expect(warmup.code).toBe(1);
    expect(warmup.stderr).toContain('--warmup expects a non-negative integer, got "-1"');
  });
});

describe('measureWriteFloor', () => {
  /** A tiny floor on the memory backend: 8 ConfigMaps per concurrency, one run. */
  const tiny: WriteFloorOptions = {
    backends: ['memory'],
    repeats: 1,
    objects: 8,
    concurrency: [1, 4],
    watchSamples: 5,
    log: () => {},
  };

  it('measures a tiny floor on the memory backend with the documented shape', async () => {
    const floor = await measureWriteFloor(tiny);
    const m = floor.backends.memory!;
    expect(Object.keys(m.createsPerSec)).toEqual(['1', '4']);
    for (const v of [...Object.values(m.createsPerSec), ...Object.values(m.updatesPerSec)])
      expect(v).toBeGreaterThan(0);
    expect(m.watchLatencyMs.p99).toBeGreaterThanOrEqual(m.watchLatencyMs.p50);
    expect(m.memory.apiProcessRssMb).toBeGreaterThan(0);
    expect(m.memory.objectsStored).toBe(17);
    expect(m.runs).toHaveLength(1);
    expect(floor.config.keepAlive).toBe(false);
  });

  it('reports only the runs after its warm-up runs, which still write', async () => {
    const floor = await measureWriteFloor({ ...tiny, warmupRepeats: 2 });
    const m = floor.backends.memory!;
    expect(floor.config.warmupRepeats).toBe(2);
    expect(m.runs).toHaveLength(1);
    expect(m.memory.objectsStored).toBe(3 * 17);
  });

  it('measures through a keep-alive client when asked, and says so', async () => {
    const floor = await measureWriteFloor({ ...tiny, concurrency: [4], keepAlive: true });
    expect(floor.config.keepAlive).toBe(true);
    expect(floor.backends.memory!.createsPerSec['4']).toBeGreaterThan(0);
  });
});
