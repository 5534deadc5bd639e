/**
 * infra/images: static checks of the Dockerfiles (no docker here to build them), that each image's bundle
 * builds from only what its Dockerfile copies into the build stage, and that the bundled forwarder — the
 * image's entrypoint, byte for byte what the Dockerfile's esbuild step makes — starts against a cluster,
 * serves health and metrics, and stops cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster, waitFor } from '../../support/local-cluster.ts';
import { REPO_ROOT } from '../manifests.ts';
import { contextCopies, parseDockerfile, type Stage } from './dockerfile.ts';

const IMAGES = [
  { name: 'forwarder', dockerfile: 'infra/images/forwarder.Dockerfile', entry: 'infra/images/forwarder-main.ts' },
  { name: 'agent', dockerfile: 'infra/images/agent.Dockerfile', entry: 'agent/main.ts' },
];
const DIGEST = /@sha256:[0-9a-f]{64}$/;

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

/**
 * The build stage's bundling step, as data: esbuild's entry, banner and output, and the files copied next to
 * the bundle (`cp -r <from> /out/<to>`). Output paths are under /out, which the runtime stage copies to /app.
 */
function esbuildStep(stage: Stage) {
  const run = stage.instructions.find((i) => i.keyword === 'RUN' && i.args.includes('esbuild'));
  if (!run) throw new Error('no esbuild step in the build stage');
  expect(run.args).toMatch(/--bundle --platform=node --format=esm/);
  const entry = /esbuild (\S+\.ts)/.exec(run.args)?.[1];
  const banner = /--banner:js=([^"]+)"/.exec(run.args)?.[1];
  const outfile = /--outfile=\/out\/(\S+)/.exec(run.args)?.[1];
  if (!entry || !banner || !outfile)
    throw new Error(`esbuild step without entry, banner or --outfile=/out/...: ${run.args}`);
  const copies = [...run.args.matchAll(/cp -r (\S+) \/out\/(\S+)/g)].map((m) => ({ from: m[1], to: m[2] }));
  return { entry, banner, outfile, copies };
}

let outDir: Promise<string> | undefined;
const bundles = new Map<string, Promise<{ metafile: Metafile; main: string }>>();

/**
 * Lays out an image's /app as its build stage does (the bundle, the files copied beside it) in a directory
 * outside the repository, so running it cannot resolve anything from the source tree; once per image.
 */
function bundle(dockerfile: string): Promise<{ metafile: Metafile; main: string }> {
  let result = bundles.get(dockerfile);
  if (!result) {
    const step = esbuildStep(parseDockerfile(read(dockerfile))[0]);
    outDir ??= mkdtemp(join(tmpdir(), 'ps-image-bundles-'));
    result = outDir.then(async (root) => {
      const app = join(root, basename(dockerfile));
      await mkdir(app, { recursive: true });
      await writeFile(join(app, 'package.json'), '{"type":"module"}');
      const built = await build({
        absWorkingDir: REPO_ROOT,
        entryPoints: [step.entry],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node22',
        minify: true,
        banner: { js: step.banner },
        metafile: true,
        outfile: join(app, step.outfile),
        logLevel: 'silent',
      });
      for (const c of step.copies) await cp(join(REPO_ROOT, c.from), join(app, c.to), { recursive: true });
      return { metafile: built.metafile!, main: join(app, step.outfile) };
    });
    bundles.set(dockerfile, result);
  }
  return result;
}

const bundlePath = async (dockerfile: string) => (await bundle(dockerfile)).main;

// Both bundles start now, side by side: bundling is most of this file's time.
for (const image of IMAGES) if (existsSync(join(REPO_ROOT, image.entry))) void bundle(image.dockerfile).catch(() => {});

afterAll(async () => {
  if (outDir) await rm(await outDir, { recursive: true, force: true });
});

describe.each(IMAGES)('$name image (static)', ({ dockerfile, entry }) => {
  const stages = parseDockerfile(read(dockerfile));
  const final = stages.at(-1)!;

  it('is multi-stage, every base pinned by digest, the runtime distroless', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(s.from, `FROM ${s.from}`).toMatch(DIGEST);
    expect(final.from).toMatch(/^gcr\.io\/distroless\/nodejs22-debian12:nonroot@/);
    expect(stages[0].from).toMatch(/^node:22-/);
  });

  it('runs as a numeric non-root user, from an exec-form entrypoint, with no shell step at run time', () => {
    const users = final.instructions.filter((i) => i.keyword === 'USER');
    expect(users.length).toBe(1);
    const [uid, gid] = users[0].args.split(':');
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).not.toBe(0);
    if (gid !== undefined) expect(Number(gid)).not.toBe(0);
    expect(final.instructions.filter((i) => i.keyword === 'RUN')).toEqual([]);
    const entrypoint = JSON.parse(final.instructions.find((i) => i.keyword === 'ENTRYPOINT')!.args);
    expect(entrypoint).toEqual(['/nodejs/bin/node', `/app/${esbuildStep(stages[0]).outfile}`]);
    const copy = final.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copy).toEqual([`--from=${stages[0].name} --chown=0:0 /out/ /app/`]);
    expect(final.instructions.some((i) => i.keyword === 'CMD')).toBe(false);
  });

  it('fetches nothing by URL, and copies only build output into the runtime', () => {
    for (const s of stages) {
      for (const i of s.instructions) {
        expect(i.keyword, `line ${i.line}`).not.toBe('ADD');
        expect(i.args, `line ${i.line}`).not.toMatch(/\b(curl|wget)\b|https?:\/\//);
      }
    }
    const names = stages.map((s) => s.name).filter(Boolean);
    for (const copy of final.instructions.filter((i) => i.keyword === 'COPY')) {
      const from = /--from=(\S+)/.exec(copy.args)?.[1];
      expect(names, `line ${copy.line}: ${copy.args}`).toContain(from);
      expect(copy.args).toMatch(/--chown=0:0/);
    }
  });

  it(`bundles ${entry} from only what the build stage copies`, async () => {
    if (!existsSync(join(REPO_ROOT, entry))) {
      // The agent program is written separately; until it lands there is nothing to bundle.
      expect(entry).toBe('agent/main.ts');
      return;
    }
    expect(esbuildStep(stages[0]).entry).toBe(entry);
    const copied = contextCopies(stages[0]).map((p) => p.replace(/\/$/, ''));
    const result = await bundle(dockerfile);
    const outside = Object.keys(result.metafile.inputs)
      .filter((input) => !input.startsWith('node_modules/'))
      .filter((input) => !copied.some((c) => input === c || input.startsWith(`${c}/`)));
    expect(outside, 'sources the bundle needs that the Dockerfile does not COPY').toEqual([]);
  });
});

describe('the bundles run as the images would run them', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(() => cluster?.stop());

  it('forwarder: rejects a missing --cluster-id with a usage error', async () => {
    const { code, stderr } = await runToEnd([await bundlePath('infra/images/forwarder.Dockerfile')]);
    expect(code).toBe(2);
    expect(stderr).toContain('--cluster-id is required');
  });

  it.skipIf(!existsSync(join(REPO_ROOT, 'agent/main.ts')))(
    'agent: its entry runs from the bundle (a usage error without flags)',
    async () => {
      const { code, stderr } = await runToEnd([await bundlePath('infra/images/agent.Dockerfile')]);
      expect(code).toBe(2);
      expect(stderr).toMatch(/^agent: /);
    },
  );

  it.skipIf(!existsSync(join(REPO_ROOT, 'agent/etcd-proxy/main.ts')))(
    'agent: the yurt-coordinator etcd proxy runs from the same bundle (`etcd-proxy`, a usage error without flags)',
    async () => {
      const { code, stderr } = await runToEnd([await bundlePath('infra/images/agent.Dockerfile'), 'etcd-proxy']);
      expect(code).toBe(2);
      expect(stderr).toMatch(/^agent etcd-proxy: --listen-url is required/);
    },
  );

  it('forwarder: starts against a cluster, serves /healthz and /metrics, and exits 0 on SIGTERM', async () => {
    const file = await bundlePath('infra/images/forwarder.Dockerfile');
    expect(relative(REPO_ROOT, file).startsWith('..')).toBe(true);
    const child = spawn(
      process.execPath,
      [
        file,
        '--cluster-id=c-image',
        `--kubeconfig=${cluster.kubeconfigPath}`,
        '--bus-endpoint=http://127.0.0.1:9',
        '--region=eu-west-1',
        '--metrics-port=0',
      ],
      {
        env: { PATH: process.env.PATH, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const port = await waitFor(
        () => /metrics on :(\d+)/.exec(stdout)?.[1],
        20_000,
        `the forwarder to be ready (stderr: ${stderr})`,
      );
      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).text()).toBe('ok');
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('c-image');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout).toContain('0 notice(s) unsent');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

function runToEnd(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}
