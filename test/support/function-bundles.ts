/**
 * Tests that look inside a function's bundle: each function of serverless.yml built with its esbuild options
 * (scripts/bundle-functions.ts) into a temporary directory the suite removes afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll } from 'vitest';
import { buildBundle, readServerlessBuild, type BuiltBundle } from '../../scripts/bundle-functions.ts';

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

/**
 * The source files whose code a cold start evaluates: those in the entry and in every chunk it reaches through
 * static imports (what `import()` of the handler loads), not those in chunks loaded on first use.
 */
export function inputsAtStart(metafile: Metafile): string[] {
  const outputs = metafile.outputs;
  const entry = Object.keys(outputs).find((f) => outputs[f].entryPoint !== undefined);
  if (!entry) throw new Error('inputsAtStart: the build has no entry output');
  const atStart = new Set([entry]);
  for (const file of atStart)
    for (const i of outputs[file].imports) if (i.kind === 'import-statement' && outputs[i.path]) atStart.add(i.path);
  return [...new Set([...atStart].flatMap((f) => Object.keys(outputs[f].inputs)))];
}
