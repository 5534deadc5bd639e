/**
 * The capacity probe ships (the probe function, `spiritctl probe`): neither it nor anything it imports may
 * reach into the local stack or the benchmarks. The local target is handed to it (ProbeTarget.start).
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

describe('probe/', () => {
  it('imports nothing from dev/local/ or dev/bench/, directly or through another module', async () => {
    const result = await build({
      entryPoints: ['probe/capacity/index.ts'],
      absWorkingDir: ROOT,
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('probe/capacity/run.ts');
    expect(inputs.filter((file) => /^(local|bench)\//.test(file))).toEqual([]);
  });
});
