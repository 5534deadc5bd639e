/**
 * `npm run images`: builds the images the product ships (agent, forwarder) and those the local node runs
 * (pause, kube-apiserver, etcd) into the git-ignored .cache/images/<name>/ without a container daemon, for
 * linux/amd64 and linux/arm64, reproducibly, each with a CycloneDX SBOM and a cosign signature (docs/images.md).
 * Idempotent: an image whose inputs did not change is not rebuilt, a signed digest not signed again.
 *
 *   npm run images [-- --json] [--only NAME,…] [--no-sign] [--out DIR]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { catalog, type ImageDef, type Prepared } from './images-catalog.ts';
import { CACHE, progress, ROOT, readPins, sha256 } from './images-inputs.ts';
import type { Entry } from './images-rootfs.ts';
import { ensureKeyPair, PUBLIC_KEY, serveImages, signImage, type Tools } from './images-sign.ts';

interface BuildResult {
  name: string;
  ref: string;
  digest: string;
  layout: string;
  archive: string;
  platforms: { platform: string; digest: string; sizeBytes: number; unpackedBytes: number }[];
}
interface Record_ {
  key: string;
  build: BuildResult;
  refs: string[];
  signature?: { digest: string; path: string; signedDigest: string };
}

class StepError extends Error {
  readonly image: string;
  readonly step: string;
  constructor(image: string, step: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.image = image;
    this.step = step;
  }
}

async function step<T>(image: string, name: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof StepError ? err : new StepError(image, name, err);
  }
}

const TOOLS_MODULE = join(ROOT, 'tools/images');
const TOOL_PACKAGES = {
  images: '.',
  cosign: 'github.com/sigstore/cosign/v2/cmd/cosign',
  'cyclonedx-gomod': 'github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod',
} as const;

/** Builds the Go tools of tools/images (the image builder and the pinned cosign and cyclonedx-gomod) when stale. */
function ensureTools(): Tools & { cyclonedxGomod: string } {
  const dir = join(CACHE, 'tools');
  mkdirSync(dir, { recursive: true });
  const goVersion = execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).trim();
  const modules = ['go.mod', 'go.sum'].map((f) => readFileSync(join(TOOLS_MODULE, f), 'utf8'));
  const sources = readdirSync(TOOLS_MODULE)
    .filter((f) => f.endsWith('.go'))
    .sort()
    .map((f) => readFileSync(join(TOOLS_MODULE, f), 'utf8'));
  const paths: Record<string, string> = {};
  for (const [name, pkg] of Object.entries(TOOL_PACKAGES)) {
    const bin = join(dir, name);
    const stamp = `${bin}.stamp`;
    // cosign and cyclonedx-gomod depend on go.mod and go.sum only; the builder on its sources too.
    const want = sha256([goVersion, pkg, ...modules, ...(name === 'images' ? sources : [])].join('\0'));
    paths[name] = bin;
    if (existsSync(bin) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) continue;
    progress(`building ${name} from tools/images (Go${name === 'cosign' ? '; cosign takes minutes cold' : ''})`);
    const r = spawnSync('go', ['build', '-trimpath', '-o', bin, pkg], {
      cwd: TOOLS_MODULE,
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
      encoding: 'utf8',
    });
    if (r.status !== 0)
      throw new StepError(
        'tools',
        `go build ${pkg}`,
        new Error(`${r.stderr}${r.error?.message ?? ''}`.trim().split('\n').slice(-10).join('\n')),
      );
    writeFileSync(stamp, want);
  }
  return { images: paths.images, cosign: paths.cosign, cyclonedxGomod: paths['cyclonedx-gomod'] };
}

/** SOURCE_DATE_EPOCH, or the time of the commit checked out: every time stamp in every image. */
function sourceDateEpoch(): number {
  const fromEnv = process.env.SOURCE_DATE_EPOCH;
  if (fromEnv !== undefined) {
    const n = Number(fromEnv);
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`SOURCE_DATE_EPOCH: expected seconds since the epoch, got ${JSON.stringify(fromEnv)}`);
    return n;
  }
  return Number(execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).trim());
}

function specOf(def: ImageDef, prepared: Prepared, created: number): object {
  return {
    name: def.name,
    ref: def.ref,
    ...(def.extraRefs.length ? { extraRefs: def.extraRefs } : {}),
    created,
    config: prepared.config,
    labels: {
      'org.opencontainers.image.title': def.name,
      'org.opencontainers.image.version': def.version,
      'org.opencontainers.image.created': new Date(created * 1000).toISOString(),
    },
    platforms: prepared.platforms.map((p) => ({ os: 'linux', architecture: p.arch, layers: p.layers })),
  };
}

/** What a build depends on: the spec and each copied file's size and modification time. */
function inputKey(spec: object, prepared: Prepared): string {
  const files: string[] = [];
  for (const p of prepared.platforms)
    for (const l of p.layers)
      for (const e of l.entries as Entry[])
        if (e.src) {
          const st = statSync(e.src);
          files.push(`${e.src}:${st.size}:${st.mtimeMs}`);
        }
  return sha256(JSON.stringify(spec) + files.join('\n'));
}

function runTool(tool: string, args: string[]): string {
  const r = spawnSync(tool, args, { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`${tool} ${args[0]}: ${`${r.stderr}${r.error?.message ?? ''}`.trim()}`);
  return r.stdout;
}

async function buildOne(
  def: ImageDef,
  tools: ReturnType<typeof ensureTools>,
  out: string,
  created: number,
): Promise<Record_> {
  const dir = join(out, def.name);
  mkdirSync(dir, { recursive: true });
  const pins = readPins();
  const prepared = await step(def.name, 'preparing inputs', () => def.prepare(pins));
  const spec = specOf(def, prepared, created);
  const key = inputKey(spec, prepared);
  const recordFile = join(dir, 'build.json');
  const previous = existsSync(recordFile) ? (JSON.parse(readFileSync(recordFile, 'utf8')) as Record_) : undefined;
  if (previous?.key === key && existsSync(join(dir, 'oci/index.json')) && existsSync(join(dir, 'sbom.cdx.json'))) {
    progress(`${def.name}: up to date (${previous.build.digest})`);
    return previous;
  }
  progress(`${def.name}: building ${def.ref} for ${prepared.platforms.map((p) => `linux/${p.arch}`).join(', ')}`);
  const started = Date.now();
  const specFile = join(dir, 'spec.json');
  writeFileSync(specFile, `${JSON.stringify(spec, null, 1)}\n`);
  const build = await step(
    def.name,
    'assembling the OCI layout (tools/images build)',
    () =>
      JSON.parse(
        runTool(tools.images, [
          'build',
          '--spec',
          specFile,
          '--layout',
          join(dir, 'oci'),
          '--archive',
          join(dir, `${def.name}.oci.tar`),
        ]),
      ) as BuildResult,
  );
  await step(def.name, 'writing the SBOM', () => {
    const goBoms = prepared.goBinaries.map((bin, i) => {
      const file = join(dir, `go-modules-${i}.cdx.json`);
      runTool(tools.cyclonedxGomod, ['bin', '-json', '-output', file, bin]);
      return file;
    });
    const input = join(dir, 'sbom-input.json');
    writeFileSync(
      input,
      JSON.stringify({ image: def.ref, version: def.version, created, components: prepared.components, goBoms }),
    );
    runTool(tools.images, ['sbom', '--in', input, '--out', join(dir, 'sbom.cdx.json')]);
  });
  progress(`${def.name}: ${build.digest} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const record: Record_ = { key, build, refs: [def.ref, ...def.extraRefs] };
  if (previous?.signature && previous.signature.signedDigest === build.digest) record.signature = previous.signature;
  writeFileSync(recordFile, `${JSON.stringify(record, null, 1)}\n`);
  return record;
}

/** Signs every image whose current digest has no signature yet, in one loopback registry. */
async function signAll(records: Record_[], tools: Tools, out: string): Promise<void> {
  const unsigned = records.filter(
    (r) => r.signature?.signedDigest !== r.build.digest || !existsSync(join(out, r.build.name, 'signature/index.json')),
  );
  if (unsigned.length === 0) return;
  await step('signing', 'generating the cosign key pair', () => ensureKeyPair(tools));
  progress(`signing ${unsigned.map((r) => r.build.name).join(', ')} with cosign (key ${PUBLIC_KEY})`);
  const reg = await step('signing', 'serving the layouts (tools/images serve)', () =>
    serveImages(
      tools,
      unsigned.map((r) => join(out, r.build.name)),
      true,
    ),
  );
  try {
    for (const [i, r] of unsigned.entries()) {
      await step(r.build.name, 'cosign sign', () => signImage(tools, reg.served.images[i].local, r.build.ref));
    }
  } finally {
    await reg.close();
  }
  for (const r of unsigned) {
    const sigIndex = JSON.parse(readFileSync(join(out, r.build.name, 'signature/index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    r.signature = {
      digest: sigIndex.manifests[0].digest,
      path: join(out, r.build.name, 'signature'),
      signedDigest: r.build.digest,
    };
    writeFileSync(join(out, r.build.name, 'build.json'), `${JSON.stringify(r, null, 1)}\n`);
  }
}

/**
 * One build at a time per output directory (the tests and a user may start two): an exclusive lock file
 * naming its holder; a lock whose process is gone is taken over.
 */
async function lockOut(out: string): Promise<() => void> {
  mkdirSync(out, { recursive: true });
  const lock = join(out, '.lock');
  const deadline = Date.now() + 30 * 60_000;
  for (let announced = false; ; ) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return () => rmSync(lock, { force: true });
    } catch {
      const holder = Number(readFileSync(lock, 'utf8'));
      let alive = holder > 0;
      try {
        if (alive) process.kill(holder, 0);
      } catch {
        alive = false;
      }
      if (!alive) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`${lock}: still held by process ${holder}; remove the file if that process is not a build`);
      if (!announced) progress(`waiting for the build of process ${holder} (${lock})`);
      announced = true;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      only: { type: 'string' },
      'no-sign': { type: 'boolean', default: false },
      out: { type: 'string', default: CACHE },
    },
  });
  const all = catalog();
  const only = values.only?.split(',').filter(Boolean);
  for (const name of only ?? []) {
    if (!all.some((d) => d.name === name))
      throw new Error(`--only: no image ${name}; images: ${all.map((d) => d.name).join(', ')}`);
  }
  const defs = only ? all.filter((d) => only.includes(d.name)) : all;
  const started = Date.now();
  const unlock = await lockOut(values.out);
  try {
    return await buildAll(defs, values, started);
  } finally {
    unlock();
  }
}

async function buildAll(
  defs: ImageDef[],
  values: { json: boolean; 'no-sign': boolean; out: string },
  started: number,
): Promise<number> {
  const tools = ensureTools();
  const created = sourceDateEpoch();
  const records: Record_[] = [];
  for (const def of defs) records.push(await buildOne(def, tools, values.out, created));
  if (!values['no-sign']) await signAll(records, tools, values.out);
  progress(`${records.length} image(s) ready in ${values.out} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

  const images = records.map((r) => ({
    name: r.build.name,
    ref: r.build.ref,
    refs: r.refs,
    digest: r.build.digest,
    platforms: r.build.platforms.map((p) => p.platform),
    sizeBytes: r.build.platforms[0].sizeBytes,
    sizes: r.build.platforms,
    layout: r.build.layout,
    archive: r.build.archive,
    sbom: join(values.out, r.build.name, 'sbom.cdx.json'),
    signature: r.signature ? { digest: r.signature.digest, layout: r.signature.path, publicKey: PUBLIC_KEY } : null,
  }));
  if (values.json) process.stdout.write(`${JSON.stringify({ images })}\n`);
  else for (const i of images) process.stdout.write(`${i.name}\t${i.ref}@${i.digest}\t${i.archive}\n`);
  return 0;
}

try {
  process.exitCode = await main();
} catch (err) {
  if (err instanceof StepError) {
    process.stderr.write(`images: building ${err.image} failed at step "${err.step}": ${err.message}\n`);
    const retry =
      err.image === 'tools' || err.image === 'signing' ? 'npm run images' : `npm run images -- --only ${err.image}`;
    process.stderr.write(`images: fix the cause above, then retry: ${retry}\n`);
  } else {
    process.stderr.write(`images: ${(err as Error).message}\n`);
  }
  process.exitCode = 1;
}
