import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../cli/command.ts';
import { loadTime, run } from '../../../dev/bench/bundles.ts';

/**
 * `npm run bench -- bundles --one-core CPU`: every cold load runs on that CPU alone, and the bench checks it
 * did (a figure labelled one-core that ran on more CPUs would compare unlike with unlike).
 */
let dir: string;
let bundle: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-load-time-'));
  bundle = join(dir, 'tiny.mjs');
  await writeFile(bundle, 'export const loaded = true;\n');
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('cold loads of the bundles bench (dev/bench/bundles.ts)', () => {
  it('runs a pinned load on one CPU, and an unpinned one on every CPU this process may use', async () => {
    const pinned = await loadTime(bundle, '', 0);
    expect(pinned.cpus).toBe(1);
    expect(pinned.wallMs).toBeGreaterThan(0);
    const free = await loadTime(bundle, '');
    expect(free.cpus).toBe(availableParallelism());
  });

  it('refuses a --one-core that is not a CPU of this machine, naming the flag', async () => {
    for (const bad of [String(availableParallelism()), '-1', '0.5', 'one']) {
      const refusal = run([`--one-core=${bad}`]);
      await expect(refusal, bad).rejects.toThrow(UsageError);
      await expect(refusal, bad).rejects.toThrow(/^--one-core: expected a CPU number from 0 to \d+, got /);
    }
  });
});
