/**
 * What `npm run package` writes (osls, offline: the CloudFormation template and one zip per function), made once
 * per set of inputs and shared by every test that judges it with AWS's own code (cfn-lint, moto, the Lambda
 * Runtime Interface Emulator). Packaging takes tens of seconds; test files in both workers ask for it, so the
 * output is kept under the git-ignored cache, keyed by a hash of the inputs, and built under a directory lock.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { packageFunctions } from '../../dev/local/functions/rie-functions.ts';
import { ROOT } from '../../scripts/bundle-functions.ts';
import { waitFor } from './wait.ts';

/** What goes into a package: the shipped sources, serverless.yml and the locked dependencies. */
const INPUT_DIRS = ['functions', 'core', 'adapters', 'shared', 'events'];
const INPUT_FILES = ['serverless.yml', 'package-lock.json', 'tsconfig.json', 'scripts/package.sh'];
const CACHE = join(ROOT, '.cache', 'packaged');
/** A packaging that holds the lock longer than this has died: its lock is taken over. */
const STALE_LOCK_MS = 10 * 60_000;

export interface Packaged {
  dir: string;
  templatePath: string;
  /** The zip `npm run package` wrote for a function of serverless.yml. */
  zipPath(functionName: string): string;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

async function inputsHash(): Promise<string> {
  const files = [
    ...(await Promise.all(INPUT_DIRS.map((d) => filesUnder(join(ROOT, d))))).flat(),
    ...INPUT_FILES.map((f) => join(ROOT, f)),
  ].sort();
  const hash = createHash('sha256');
  for (const f of files) {
    hash
      .update(relative(ROOT, f))
      .update('\0')
      .update(await readFile(f))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function packagedAt(dir: string): Packaged {
  return {
    dir,
    templatePath: join(dir, 'cloudformation-template-update-stack.json'),
    zipPath: (name) => join(dir, `${name}.zip`),
  };
}

async function lockIsStale(lock: string): Promise<boolean> {
  const s = await stat(lock).catch(() => undefined);
  return s !== undefined && Date.now() - s.mtimeMs > STALE_LOCK_MS;
}

/** Runs `npm run package` (stage dev) unless the same inputs were packaged before, and says where it wrote. */
export async function packaged(): Promise<Packaged> {
  const dir = join(CACHE, await inputsHash());
  const done = join(dir, '.complete');
  if (existsSync(done)) return packagedAt(dir);
  await mkdir(CACHE, { recursive: true });
  const lock = `${dir}.lock`;
  await waitFor(
    async () => {
      if (existsSync(done)) return true;
      if (await lockIsStale(lock)) await rm(lock, { recursive: true, force: true });
      return mkdir(lock).then(
        () => true,
        () => false,
      );
    },
    STALE_LOCK_MS + 60_000,
    `the packaging lock ${lock}`,
    500,
  );
  try {
    if (existsSync(done)) return packagedAt(dir);
    const building = `${dir}.building`;
    await packageFunctions(building);
    await rm(dir, { recursive: true, force: true });
    await rename(building, dir);
    await mkdir(done);
    return packagedAt(dir);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
