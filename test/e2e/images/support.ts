/**
 * Runs `npm run images` (scripts/images.ts) and the image tool it builds (tools/images) for the image tests.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const CACHE = join(ROOT, '.cache/images');
export const IMAGES_TOOL = join(CACHE, 'tools/images');
export const COSIGN = join(CACHE, 'tools/cosign');

export interface BuiltImage {
  name: string;
  ref: string;
  refs: string[];
  digest: string;
  platforms: string[];
  sizeBytes: number;
  archive: string;
  layout: string;
  sbom: string;
  signature: { digest: string; layout: string; publicKey: string } | null;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, collecting its output (never inherited: nothing of it reaches the test log). */
export function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  input?: NodeJS.ReadableStream,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input) input.pipe(child.stdin);
    else child.stdin.end();
  });
}

/** `npm run images -- --json …`: the images it reports, or an error with the end of its progress output. */
export async function buildImages(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<BuiltImage[]> {
  const r = await run(process.execPath, ['scripts/images.ts', '--json', ...args], env);
  if (r.code !== 0)
    throw new Error(
      `scripts/images.ts ${args.join(' ')} exited ${r.code}:\n${r.stderr.split('\n').slice(-12).join('\n')}`,
    );
  return (JSON.parse(r.stdout) as { images: BuiltImage[] }).images;
}
