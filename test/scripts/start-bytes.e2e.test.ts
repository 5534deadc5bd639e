import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionBundles } from '../support/function-bundles.ts';

/**
 * `startBytes` (scripts/bundle-functions.ts, reported by `npm run bench -- bundles`) is the code a cold start
 * loads: the entry and the chunks it imports statically, not those behind `import()`. Checked against the
 * files as written, following their static imports the way Node does.
 */
const bundles = functionBundles('ps-start-bytes-');

/** Sum of the sizes of `file` and every file it reaches through static `from"./..."` imports. */
async function bytesReachedStatically(file: string): Promise<number> {
  const seen = new Set<string>([file]);
  let total = 0;
  for (const f of seen) {
    total += (await stat(f)).size;
    const text = await readFile(f, 'utf8');
    for (const [, spec] of text.matchAll(/\bfrom\s*"(\.{1,2}\/[^"]+)"/g)) seen.add(join(dirname(f), spec));
  }
  return total;
}

describe('the code a cold start loads', () => {
  it('is the entry and its statically imported chunks, not the chunks loaded on first use', async () => {
    const built = await bundles.build('reconcile');
    expect(built.startBytes).toBe(await bytesReachedStatically(built.file));
    // reconcile has both kinds: shared chunks loaded at start, the issuer and others loaded on first use.
    expect(built.startBytes).toBeGreaterThan(built.bytes);
    expect(built.startBytes).toBeLessThan(built.totalBytes);
  });
});
