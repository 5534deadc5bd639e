/**
 * Tests that look inside a function's bundle: each function of serverless.yml built with its esbuild options
 * (scripts/bundle-functions.ts) into a temporary directory the suite removes afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll } from 'vitest';
import { type BuiltBundle, buildBundle, outputsAtStart, readServerlessBuild } from '../../scripts/bundle-functions.ts';

export function functionBundles(prefix: string) {
  const build = readServerlessBuild();
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));
  return {
    /** Every function's name, in serverless.yml's order. */
    names: build.functions.map((f) => f.name),
    /** Builds one function's bundle as `npm run package` would. */
    async build(name: string): Promise<BuiltBundle> {
      const fn = build.functions.find((f) => f.name === name);
      if (!fn) throw new Error(`no function ${name} in serverless.yml`);
      if (!dir) throw new Error('functionBundles: build() runs inside a test');
      return buildBundle(build, fn.entry, join(dir, name));
    },
  };
}

/** The source files whose code a cold start evaluates (scripts/bundle-functions.ts `outputsAtStart`). */
export function inputsAtStart(metafile: Metafile): string[] {
  return [...new Set(outputsAtStart(metafile).flatMap((f) => Object.keys(metafile.outputs[f].inputs)))];
}

/** The source files that put code into any output of a build (tree-shaken files are left out). */
export function shippedInputs(metafile: Metafile): Set<string> {
  const shipped = new Set<string>();
  for (const [file, output] of Object.entries(metafile.outputs)) {
    if (file.endsWith('.map')) continue;
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) if (bytesInOutput > 0) shipped.add(input);
  }
  return shipped;
}
