/**
 * Signing with cosign, as a user signs for their registry: cosign signs registry references, so the layouts
 * are served from tools/images' in-memory registry on the loopback address (`images serve`), signed there with
 * a key pair kept in the git-ignored cache, and each signature is stored beside its layout (dir/signature).
 * No transparency log: the key is the trust root (`--tlog-upload=false`, verified with
 * `--insecure-ignore-tlog`), the same flow as a private registry such as ECR.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CACHE } from './images-inputs.ts';

export const KEY_DIR = join(CACHE, 'keys');
export const PRIVATE_KEY = join(KEY_DIR, 'cosign.key');
export const PUBLIC_KEY = join(KEY_DIR, 'cosign.pub');

export interface Tools {
  images: string;
  cosign: string;
}

/** cosign reads the key's password from COSIGN_PASSWORD; the local key has an empty one unless it is set. */
function cosignEnv(): NodeJS.ProcessEnv {
  return { ...process.env, COSIGN_PASSWORD: process.env.COSIGN_PASSWORD ?? '' };
}

/** Runs cosign; its output (never a key: cosign prints paths and digests) is returned, not printed. */
export function cosign(tools: Tools, args: string[]): { ok: boolean; output: string } {
  const r = spawnSync(tools.cosign, args, { env: cosignEnv(), encoding: 'utf8', timeout: 120_000 });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}` };
}

export function ensureKeyPair(tools: Tools): void {
  if (existsSync(PRIVATE_KEY) && existsSync(PUBLIC_KEY)) return;
  mkdirSync(KEY_DIR, { recursive: true, mode: 0o700 });
  const r = cosign(tools, ['generate-key-pair', '--output-key-prefix', join(KEY_DIR, 'cosign')]);
  if (!r.ok) throw new Error(`cosign generate-key-pair failed: ${r.output.split('\n').slice(-3).join(' ')}`);
  chmodSync(PRIVATE_KEY, 0o600);
}

export interface Served {
  registry: string;
  images: { dir: string; ref: string; local: string }[];
}

export interface RegistryHandle {
  served: Served;
  /** Stops the registry; with save, after it stored the signatures it holds beside the layouts. */
  close(): Promise<void>;
}

/** Serves image directories (dir/oci and any dir/signature) from an in-memory registry on 127.0.0.1. */
export async function serveImages(tools: Tools, dirs: string[], save: boolean): Promise<RegistryHandle> {
  const child: ChildProcess = spawn(tools.images, ['serve', ...(save ? ['--save-signatures'] : []), ...dirs], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await new Promise<string | undefined>((resolve) => {
    lines.once('line', resolve);
    lines.once('close', () => resolve(undefined));
  });
  if (!first) {
    await exited;
    throw new Error(`images serve: ${stderr.trim() || 'exited before it served'}`);
  }
  const served = JSON.parse(first) as Served;
  return {
    served,
    async close() {
      child.stdin?.end();
      const code = await exited;
      if (code !== 0) throw new Error(`images serve: ${stderr.trim() || `exited ${code}`}`);
    },
  };
}

/** The repository of a reference, without its tag: what the signature says the image is. */
const repositoryOf = (ref: string): string => ref.slice(0, ref.lastIndexOf(':'));

export function signImage(tools: Tools, local: string, ref: string): void {
  const r = cosign(tools, [
    'sign',
    '--key',
    PRIVATE_KEY,
    '--tlog-upload=false',
    '--allow-http-registry',
    '--yes',
    // The signed identity is the image's real name, not the loopback registry it was signed in.
    `--sign-container-identity=${repositoryOf(ref)}`,
    local,
  ]);
  if (!r.ok) throw new Error(`cosign sign ${local}: ${r.output.trim().split('\n').slice(-3).join(' ')}`);
}

export function verifyImage(tools: Tools, local: string, publicKey = PUBLIC_KEY): { ok: boolean; output: string } {
  return cosign(tools, ['verify', '--key', publicKey, '--insecure-ignore-tlog', '--allow-http-registry', local]);
}
