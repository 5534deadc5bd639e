/**
 * The inputs of the images, each fetched from a package registry or built from a pinned module, checked
 * against the hash in tools/images/pins.json or keyed by what it is built from, and kept in
 * .cache/images/inputs so that a warm run fetches and compiles nothing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

export const ROOT = join(import.meta.dirname, '..');
export const CACHE = join(ROOT, '.cache/images');
const INPUTS = join(CACHE, 'inputs');

export type Arch = 'amd64' | 'arm64';
export const ARCHES: readonly Arch[] = ['amd64', 'arm64'];

const DebPin = z.object({
  package: z.string(),
  version: z.string(),
  arch: z.enum(['amd64', 'arm64']),
  path: z.string().regex(/^pool\/[\w/.+~-]+\.deb$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type DebPin = z.infer<typeof DebPin>;
const Pins = z.object({
  debian: z.object({ mirror: z.string().url(), packages: z.array(DebPin) }),
  node: z.object({
    version: z.string(),
    packages: z.object({
      amd64: z.object({ name: z.string(), integrity: z.string() }),
      arm64: z.object({ name: z.string(), integrity: z.string() }),
    }),
  }),
});
export type Pins = z.infer<typeof Pins>;

export function readPins(): Pins {
  const file = join(ROOT, 'tools/images/pins.json');
  const parsed = Pins.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success)
    throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

export function progress(message: string): void {
  process.stderr.write(`images: ${message}\n`);
}

/** Writes a file only when its content changed, so that its time stamp says when it last changed. */
export function writeIfChanged(file: string, data: string | Buffer): void {
  if (existsSync(file) && readFileSync(file).equals(Buffer.from(data))) return;
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    const tail = `${r.stderr}${r.stdout}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${tail}`);
  }
  return r.stdout;
}

/** A Debian package's files, from the pinned mirror path, checked against its pinned SHA-256. */
export async function debRoot(pins: Pins, name: string, arch: Arch): Promise<{ dir: string; pin: DebPin }> {
  const pin = pins.debian.packages.find((p) => p.package === name && p.arch === arch);
  if (!pin) throw new Error(`tools/images/pins.json: debian.packages: no ${name} for ${arch}`);
  const dir = join(INPUTS, 'debs', `${pin.package}_${pin.version}_${pin.arch}`);
  if (existsSync(join(dir, '.complete'))) return { dir, pin };
  const mirror = process.env.DEBIAN_MIRROR ?? pins.debian.mirror;
  const url = `${mirror}/${pin.path}`;
  progress(`fetching ${pin.package} ${pin.version} (${arch}) from ${mirror}`);
  const res = await fetch(url);
  if (!res.ok) {
    throw new Error(
      `${url}: HTTP ${res.status}. Debian mirrors keep only current versions: set DEBIAN_MIRROR to a snapshot ` +
        `(https://snapshot.debian.org/archive/debian/<date>) or update the pin in tools/images/pins.json`,
    );
  }
  const deb = Buffer.from(await res.arrayBuffer());
  const got = sha256(deb);
  if (got !== pin.sha256) throw new Error(`${url}: SHA-256 ${got}, pinned ${pin.sha256} (tools/images/pins.json)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const file = join(dir, '..', `${pin.package}_${pin.version}_${pin.arch}.deb`);
  writeFileSync(file, deb);
  run('dpkg-deb', ['-x', file, dir]);
  rmSync(file);
  writeFileSync(join(dir, '.complete'), '');
  return { dir, pin };
}

/** The Node runtime for `arch`: the npm package of the pinned version, checked against its pinned integrity. */
export function nodeRuntime(pins: Pins, arch: Arch): { binary: string; license: string; name: string } {
  const pkg = pins.node.packages[arch];
  const dir = join(INPUTS, 'node', `${pkg.name}-${pins.node.version}`);
  const binary = join(dir, 'package/bin/node');
  const license = join(dir, 'package/LICENSE');
  if (existsSync(join(dir, '.complete'))) return { binary, license, name: pkg.name };
  progress(`fetching ${pkg.name}@${pins.node.version} from the npm registry`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const packed = JSON.parse(
    run('npm', ['pack', `${pkg.name}@${pins.node.version}`, '--json', '--pack-destination', dir, '--loglevel=error']),
  ) as { filename: string; integrity: string }[];
  const entry = packed[0];
  if (!entry || entry.integrity !== pkg.integrity) {
    throw new Error(
      `${pkg.name}@${pins.node.version}: integrity ${entry?.integrity}, pinned ${pkg.integrity} (tools/images/pins.json)`,
    );
  }
  run('tar', ['-xzf', join(dir, entry.filename), '-C', dir]);
  rmSync(join(dir, entry.filename));
  writeFileSync(join(dir, '.complete'), '');
  return { binary, license, name: pkg.name };
}

const kubeBinariesByArch = new Map<Arch, Record<string, string>>();

/** The pinned kube-apiserver and etcd builds of scripts/kube-bins.sh, for `arch` (arm64 cross-compiled). */
export function kubeBinaries(arch: Arch): Record<string, string> {
  const known = kubeBinariesByArch.get(arch);
  if (known) return known;
  const names = ['kube-apiserver', 'kube-apiserver-v1.37.2', 'etcd'];
  const env: NodeJS.ProcessEnv = { ...process.env, KUBE_BINS_ONLY: names.join(' ') };
  if (arch !== 'amd64') env.KUBE_BINS_GOARCH = arch;
  else delete env.KUBE_BINS_GOARCH;
  progress(
    `kube-apiserver and etcd for linux/${arch}: scripts/kube-bins.sh (builds what is missing; minutes when cold)`,
  );
  const out = execFileSync('bash', ['scripts/kube-bins.sh'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const bins: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) bins[line.slice(0, eq)] = line.slice(eq + 1);
  }
  for (const n of names) if (!bins[n]) throw new Error(`scripts/kube-bins.sh printed no path for ${n} (${arch})`);
  kubeBinariesByArch.set(arch, bins);
  return bins;
}

/** Where a Go module of a tools/ directory is unpacked in the module cache. */
export function goModuleDir(toolsDir: string, module: string): { dir: string; version: string } {
  const info = JSON.parse(
    run('go', ['mod', 'download', '-json', module], {
      cwd: join(ROOT, toolsDir),
      env: { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
    }),
  ) as { Dir: string; Version: string };
  return { dir: info.Dir, version: info.Version };
}

const CC: Record<Arch, string> = { amd64: 'gcc', arm64: 'aarch64-linux-gnu-gcc' };

/**
 * The pause binary as upstream builds it (build/pause/Makefile: `-Os -Wall -Werror -static`), from pause.c of
 * the pinned k8s.io/kubernetes module, with Debian's gcc (cross gcc for arm64).
 */
export function pauseBinary(arch: Arch, tag: string): { binary: string; source: string; compiler: string } {
  const { dir, version } = goModuleDir('tools/kube', 'k8s.io/kubernetes');
  const source = join(dir, 'build/pause/linux/pause.c');
  const cc = CC[arch];
  const compiler = run(cc, ['-dumpfullversion']).trim();
  const flags = ['-Os', '-Wall', '-Werror', '-static', `-DVERSION=v${tag}-${version}`, '-Wl,--build-id=none'];
  const key = sha256([readFileSync(source, 'utf8'), cc, compiler, ...flags].join('\0')).slice(0, 16);
  const out = join(INPUTS, 'pause', `${arch}-${key}`, 'pause');
  if (!existsSync(out)) {
    progress(`compiling pause.c (k8s.io/kubernetes ${version}) for linux/${arch} with ${cc} ${compiler}`);
    mkdirSync(join(out, '..'), { recursive: true });
    run(cc, [...flags, '-o', `${out}.tmp`, source]);
    run(arch === 'amd64' ? 'strip' : 'aarch64-linux-gnu-strip', [`${out}.tmp`]);
    renameSync(`${out}.tmp`, out);
  }
  return {
    binary: out,
    source: `k8s.io/kubernetes@${version}/build/pause/linux/pause.c`,
    compiler: `${cc} ${compiler}`,
  };
}
