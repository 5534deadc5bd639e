import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * test/ mirrors the source tree (test/README.md): a test of `dev/local/kube-api/server/x.ts` lives in
 * `test/dev/local/kube-api/server/`, so the tests of a module are found from its path and a folder of tests
 * always names the code it covers. Outside the mirror are only `support/` (shared helpers), `fixtures/`
 * folders (data a test reads) and `e2e/<topic>/` (tests whose subject is the whole system).
 */
const ROOT = join(import.meta.dirname, '..');
const TEST = join(ROOT, 'test');

/** Folders of test/ that need no source folder of the same path, by their first or any segment. */
const OUTSIDE_THE_MIRROR = { first: new Set(['support', 'e2e']), any: new Set(['fixtures']) };

/** Every folder under test/ that holds a file, at any depth (an empty folder is not in git, so not checked). */
function foldersWithFiles(dir: string, out = new Set<string>()): Set<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) foldersWithFiles(path, out);
    else if (dir !== TEST) out.add(relative(TEST, dir));
  }
  return out;
}

function mirrored(folder: string): boolean {
  const segments = folder.split(sep);
  return !OUTSIDE_THE_MIRROR.first.has(segments[0]) && !segments.some((s) => OUTSIDE_THE_MIRROR.any.has(s));
}

describe('test/ mirrors the source folders', () => {
  const folders = [...foldersWithFiles(TEST)].sort();

  it('finds the folders it checks', () => {
    // Guards the walk itself: a broken walk would find nothing and pass the check below vacuously.
    expect(folders).toEqual(expect.arrayContaining(['core', join('dev', 'local', 'kube-api', 'server'), 'support']));
  });

  it('has no folder without a source folder at the same path (other than support/, fixtures/ and e2e/)', () => {
    const stray = folders
      .filter(mirrored)
      .filter((folder) => !(existsSync(join(ROOT, folder)) && statSync(join(ROOT, folder)).isDirectory()));
    expect(
      stray,
      'move these tests to test/<path of the source folder they test>, or to test/e2e/<topic>/ when no single ' +
        'source module is their subject (test/README.md)',
    ).toEqual([]);
  });
});
