/** The repository's sources as they were at a git revision, for benchmarks that compare a build of it with this tree's. */
import { execFile } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { UsageError } from '../../../cli/command.ts';
import { ROOT } from '../../../scripts/bundle-functions.ts';

const exec = promisify(execFile);

/**
 * Writes a `git archive` of `ref` to `dir/src`, beside this tree's node_modules (linked), and returns that
 * directory. `flag` names the option the revision came from, for the error a bad one gets.
 */
export async function sourcesAtRevision(ref: string, dir: string, flag = '--against'): Promise<string> {
  if (!/^[\w./~^-]+$/.test(ref)) throw new UsageError(`${flag}: expected a git revision, got "${ref}"`);
  try {
    await exec('git', ['-C', ROOT, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new UsageError(`${flag}: no commit "${ref}" in ${ROOT}`);
  }
  const src = join(dir, 'src');
  await mkdir(src, { recursive: true });
  await exec('sh', ['-c', 'git -C "$0" archive "$1" | tar -x -C "$2"', ROOT, ref, src]);
  await symlink(join(ROOT, 'node_modules'), join(src, 'node_modules'));
  return src;
}
