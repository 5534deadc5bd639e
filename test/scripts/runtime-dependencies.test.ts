/**
 * package.json's `dependencies` are what the shipped code imports, nothing more: the functions' bundles (built
 * with serverless.yml's esbuild options, as `npm run package` does) and the forwarder's and agent's images
 * (the entry of each Dockerfile's esbuild step). Everything else (the local stack, the benchmarks, test
 * fixtures) belongs in `devDependencies`, so a reader of `dependencies` sees what runs in the cloud.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ROOT, readServerlessBuild } from '../../scripts/bundle-functions.ts';
import { parseDockerfile } from '../infra/images/dockerfile.ts';

const IMAGES = ['infra/images/forwarder.Dockerfile', 'infra/images/agent.Dockerfile'];

/** The entry file of a Dockerfile's esbuild step. */
function imageEntry(dockerfile: string): string {
  const run = parseDockerfile(readFileSync(join(ROOT, dockerfile), 'utf8'))
    .flatMap((stage) => stage.instructions)
    .find((i) => i.keyword === 'RUN' && i.args.includes('esbuild'));
  const entry = run && /esbuild (\S+\.ts)/.exec(run.args)?.[1];
  if (!entry) throw new Error(`${dockerfile}: no esbuild step with a .ts entry`);
  return entry;
}

/** Packages that first-party files of the bundle import directly (not the packages' own dependencies). */
function importedPackages(metafile: Metafile): Set<string> {
  const packages = new Set<string>();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    if (file.includes('node_modules/')) continue;
    for (const i of input.imports) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(i.path)?.[1];
      if (name) packages.add(name);
    }
  }
  return packages;
}

describe('runtime dependencies', () => {
  it('are exactly the packages the shipped functions, forwarder and agent import', async () => {
    const serverless = readServerlessBuild();
    const entries = [...serverless.functions.map((f) => f.entry), ...IMAGES.map(imageEntry)];
    const shipped = new Map<string, string[]>();
    const built = await Promise.all(
      entries.map(async (entry) => ({
        entry,
        result: await build({
          ...serverless.esbuildOptions,
          entryPoints: [entry],
          absWorkingDir: ROOT,
          outdir: join(ROOT, '.esbuild', 'runtime-dependencies'),
          // What is imported does not depend on minifying or source maps: skip both.
          minify: false,
          sourcemap: false,
          write: false,
          metafile: true,
          logLevel: 'silent',
        }),
      })),
    );
    for (const { entry, result } of built) {
      for (const name of importedPackages(result.metafile)) shipped.set(name, [...(shipped.get(name) ?? []), entry]);
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    const declared = Object.keys(pkg.dependencies ?? {}).sort();

    const undeclared = [...shipped.keys()]
      .filter((name) => !declared.includes(name))
      .map((name) => `${name} (${shipped.get(name)?.join(', ')})`);
    expect(undeclared, 'shipped code imports these, so they belong in dependencies').toEqual([]);
    const unshipped = declared.filter((name) => !shipped.has(name));
    expect(unshipped, 'no shipped bundle imports these: move them to devDependencies').toEqual([]);
  });
});
