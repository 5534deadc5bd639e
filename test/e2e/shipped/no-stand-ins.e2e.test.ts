/**
 * Nothing shipped imports the stand-ins: every entry that ships (the five functions, bundled as `npm run package`
 * bundles them; the agent and the forwarder, as their images bundle them) is built here, and no source file under
 * dev/ (the local stack, the benchmarks, the soak) may be among its inputs.
 */
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { functionBundles } from '../../support/function-bundles.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const bundles = functionBundles('ps-shipped-');
const IMAGE_ENTRIES = { agent: 'agent/main.ts', forwarder: 'infra/images/forwarder-main.ts' } as const;

/** Inputs of a build that live under dev/. */
const fromDev = (metafile: Metafile) => Object.keys(metafile.inputs).filter((input) => /(^|\/)dev\//.test(input));

async function bundleEntry(entry: string): Promise<Metafile> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

describe('nothing shipped imports dev/', () => {
  it('the check sees dev/ inputs where there are some (the local fleet)', async () => {
    expect(fromDev(await bundleEntry('dev/local/fleet/fleet.ts')).length).toBeGreaterThan(10);
  });

  for (const name of bundles.names) {
    it(`function ${name}`, async () => {
      const { metafile } = await bundles.build(name);
      expect(Object.keys(metafile.inputs).length).toBeGreaterThan(10);
      expect(fromDev(metafile)).toEqual([]);
    });
  }

  for (const [name, entry] of Object.entries(IMAGE_ENTRIES)) {
    it(`${name} (${entry})`, async () => {
      const metafile = await bundleEntry(entry);
      expect(Object.keys(metafile.inputs).length).toBeGreaterThan(10);
      expect(fromDev(metafile)).toEqual([]);
    });
  }
});
