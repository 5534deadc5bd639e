import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_22 } from '../../dev/bench/bundles.ts';
import { type BuiltBundle, buildBundle, readServerlessBuild } from '../../scripts/bundle-functions.ts';
import { shippedInputs } from '../support/function-bundles.ts';

/**
 * The functions validate with zod/mini, never classic zod: classic's API layer is most of the load-time gap
 * to the SDK-only baseline (dev/bench/bundles.ts), and a single classic import anywhere in a function's graph
 * ships all of it. Mini loads no locale, so shared/zod.ts sets English; it must survive tree-shaking, and
 * no other locale may ship. Bundles are built exactly as `npm run package` builds them.
 */
const run = promisify(execFile);
const build = readServerlessBuild();
// Matched anywhere in a path: a dependency's own nested copy of zod counts too.
const CLASSIC = 'node_modules/zod/v4/classic/';
const MINI = 'node_modules/zod/v4/mini/';
const LOCALES = 'node_modules/zod/v4/locales/';
const LOCALE_SETUP = 'shared/zod.ts';

let outDir: string;
const bundles = new Map<string, BuiltBundle>();

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'ps-zod-mini-'));
  for (const fn of build.functions) bundles.set(fn.name, await buildBundle(build, fn.entry, join(outDir, fn.name)));
}, 120_000);

afterAll(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

/** First-party shipped files importing zod other than through shared/zod.ts: where a classic import came from. */
function directZodImporters(metafile: Metafile, shipped: Set<string>): string[] {
  return Object.entries(metafile.inputs)
    .filter(([file]) => shipped.has(file) && file !== LOCALE_SETUP && !file.includes('node_modules/'))
    .filter(([, input]) => input.imports.some((i) => i.path.includes('node_modules/zod/')))
    .map(
      ([file, input]) =>
        `${file} → ${input.imports
          .filter((i) => i.path.includes('node_modules/zod/'))
          .map((i) => i.original ?? i.path)
          .join(', ')}`,
    );
}

describe('zod in the function bundles', () => {
  it.each(build.functions.map((f) => f.name))('%s ships zod/mini only, no classic zod', (name) => {
    const { metafile } = bundles.get(name)!;
    const shipped = shippedInputs(metafile);
    const classic = [...shipped].filter((f) => f.includes(CLASSIC));
    expect(classic, `classic zod in ${name}; imported by: ${directZodImporters(metafile, shipped).join('; ')}`).toEqual(
      [],
    );
    expect(
      [...shipped].some((f) => f.includes(MINI)),
      `${name} uses zod/mini`,
    ).toBe(true);
  });

  it.each(build.functions.map((f) => f.name))(
    '%s ships the English locale and its setup, and no other locale',
    (name) => {
      const shipped = shippedInputs(bundles.get(name)!.metafile);
      const locales = [...shipped]
        .filter((f) => f.includes(LOCALES))
        .map((f) => f.slice(f.indexOf(LOCALES) + LOCALES.length));
      expect(locales, `zod locales shipped in ${name}`).toEqual(['en.js']);
      // Tree-shaking keeps shared/zod.ts (and its `config(en())`) only while its own exports are used.
      expect(
        shipped.has(LOCALE_SETUP),
        `${LOCALE_SETUP} tree-shaken out of ${name}: errors would read "Invalid input"`,
      ).toBe(true);
    },
  );

  it('a bundle built like the functions reports English messages naming each field', async () => {
    const probe = await buildBundle(
      build,
      {
        name: 'zod-locale-probe',
        contents: [
          "import { parseEvent, reconcileRequestDetailSchema } from './events/index.ts';",
          "import { parsePoolSpiritSpec } from './core/poolspirit/parse.ts';",
          'const out = [];',
          "try { parseEvent(reconcileRequestDetailSchema, { clusterId: '', nodePool: 7, reason: 'cli', requestedBy: 'x' }); } catch (err) { out.push(err.message); }",
          "const spec = parsePoolSpiritSpec({ nodePool: 'Not_A_Name', etcd: { storage: { sizeLimit: '-1Gi' } } });",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a probe script, whose own template literal this is
          'if (!spec.ok) out.push(...spec.issues.map((i) => `${i.field}: ${i.message}`));',
          'process.stdout.write(JSON.stringify(out));',
        ].join('\n'),
      },
      join(outDir, 'locale-probe'),
    );
    expect([...shippedInputs(probe.metafile)].some((f) => f.includes(CLASSIC))).toBe(false);
    const { stdout } = await run(NODE_22, [probe.file]);
    expect(JSON.parse(stdout)).toEqual([
      'invalid event: clusterId: Too small: expected string to have >=1 characters; nodePool: Invalid input: expected string, received number',
      'spec.nodePool: must be a NodePool name (a DNS subdomain)',
      'spec.etcd.storage.sizeLimit: must not be negative',
    ]);
  });
});
