/**
 * `npm run bench -- bundles [--runs N] [--function NAME] [--keep DIR] [--against REV] [--one-core CPU]`: size and
 * load time of each function's bundle.
 *
 * Each function is bundled with serverless.yml's esbuild options (what `npm run package` zips), next to a
 * baseline bundle of only the AWS SDK exports that function's code uses (same options). Load time is the
 * time `await import()` of the bundle takes in a fresh Node 22 process started with the function's
 * NODE_OPTIONS (provider.environment; source maps are enabled in Lambda, so their cost is counted), as
 * elapsed time and as the process's CPU time (steadier when other work shares the machine). Runs are
 * interleaved (function, baseline, function, baseline, ...) so machine load hits both alike; ratios are
 * of the medians. Targets: BUNDLE_SIZE_CAP_BYTES, LOAD_RATIO_TARGET (CI) and LOAD_RATIO_GOAL (docs/deploy.md).
 * `--against REV` also builds the functions as they were at a git revision and loads them in the same
 * interleaved runs, so a before/after comparison shares one machine state.
 * `--one-core CPU` runs every load on that CPU alone (taskset): a function of at most 1,769 MB has less than one
 * vCPU in Lambda, so V8's background compile and GC threads get no core of their own there, as here.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { UsageError } from '../../cli/command.ts';
import {
  buildBundle,
  bytesAtStart,
  heaviestInputs,
  ROOT,
  readServerlessBuild,
  sdkBaselineSource,
  sdkUsage,
} from '../../scripts/bundle-functions.ts';
import { sourcesAtRevision } from './lib/revision.ts';
import { median, round } from './lib/stats.ts';

const exec = promisify(execFile);

/** Committed ceiling for one function's minified code, entry and chunks together (source maps ship beside). */
export const BUNDLE_SIZE_CAP_BYTES = 3 * 1024 * 1024;
/**
 * What test/scripts/package.e2e.test.ts holds every CI run to: a function loads in at most this multiple of its
 * SDK-only baseline.
 */
export const LOAD_RATIO_TARGET = 1.5;
/** The goal, each function on its own (medians of at least 7 interleaved runs): met when both ratios are within it. */
export const LOAD_RATIO_GOAL = 1.25;
/** Fewer runs than this make a median of cold loads on a shared machine mostly noise. */
export const MIN_RUNS = 7;

/** Node 22 (the system node may be older): the binary npm installed for the project. */
export const NODE_22 = join(ROOT, 'node_modules', '.bin', 'node');

export interface LoadSamples {
  median: number;
  samples: number[];
}

export interface BundleMeasurement extends LoadComparison {
  /** The entry bundle: the code a cold start loads. */
  bytes: number;
  /** Entry plus the chunks loaded on first use: all the code the function ships (held to the size cap). */
  totalBytes: number;
  /** Entry plus the chunks it imports statically: the code a cold start loads. */
  startBytes: number;
  /** Chunks split off (file name without directory → bytes). */
  chunks: Record<string, number>;
  baselineBytes: number;
  withinSizeCap: boolean;
  /** loadRatio ≤ LOAD_RATIO_TARGET. */
  withinLoadTarget: boolean;
  /** loadRatio and cpuRatio ≤ LOAD_RATIO_GOAL. */
  withinLoadGoal: boolean;
  /** The AWS SDK exports the baseline loads (the function's own). */
  sdkExports: string[];
  /** Largest contributors to the function's bundle (package or first-party directory). */
  heaviest: { input: string; bytes: number }[];
}

export interface BundlesReport {
  node: string;
  nodeOptions: string;
  runs: number;
  sizeCapBytes: number;
  loadRatioTarget: number;
  loadRatioGoal: number;
  /** The machine's load average while measuring (1, 5, 15 min): ratios are of runs interleaved under the same load. */
  loadAverage: number[];
  /** The CPU every load ran on alone (`--one-core`), or null when loads could use every core. */
  oneCore: number | null;
  functions: Record<string, BundleMeasurement>;
  /** The same functions built from another git revision, loaded in the same interleaved runs. */
  against?: {
    ref: string;
    functions: Record<string, LoadComparison & { bytes: number; totalBytes: number; startBytes: number }>;
  };
}

const LOAD_SCRIPT = [
  'const cpu0 = process.cpuUsage();',
  'const t0 = performance.now();',
  'await import(process.env.PS_BUNDLE_URL);',
  'const wallMs = performance.now() - t0;',
  'const cpu = process.cpuUsage(cpu0);',
  // After the timing: how many CPUs the process was allowed (affinity), so a pinned load can be checked.
  "const { availableParallelism } = await import('node:os');",
  'process.stdout.write(JSON.stringify({ wallMs, cpuMs: (cpu.user + cpu.system) / 1000, cpus: availableParallelism() }));',
].join('\n');

export interface LoadTime {
  /** Elapsed time of `await import()`. */
  wallMs: number;
  /** CPU time the process spent on it (all threads): less disturbed by other processes on a busy machine. */
  cpuMs: number;
  /** CPUs the loading process could run on (its affinity): 1 when pinned. */
  cpus: number;
}

/**
 * One cold load of a bundle: a new Node 22 process that imports it and reports how long that took; on CPU
 * `oneCore` alone when given.
 */
export async function loadTime(file: string, nodeOptions: string, oneCore?: number): Promise<LoadTime> {
  const node = [NODE_22, '--input-type=module', '-e', LOAD_SCRIPT];
  const [command, ...args] = oneCore === undefined ? node : ['taskset', '--cpu-list', String(oneCore), ...node];
  const { stdout } = await exec(command, args, {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: nodeOptions, PS_BUNDLE_URL: pathToFileURL(file).href },
  });
  let parsed: Partial<LoadTime> = {};
  try {
    parsed = JSON.parse(stdout) as Partial<LoadTime>;
  } catch {
    // reported below
  }
  if (!Number.isFinite(parsed.wallMs) || !Number.isFinite(parsed.cpuMs) || !Number.isInteger(parsed.cpus))
    throw new Error(`loading ${file} printed ${JSON.stringify(stdout)}, expected {wallMs, cpuMs, cpus}`);
  // A figure labelled one-core that ran on more would compare unlike with unlike.
  if (oneCore !== undefined && parsed.cpus !== 1)
    throw new Error(`loading ${file} on CPU ${oneCore} alone: the process could run on ${parsed.cpus} CPUs`);
  return parsed as LoadTime;
}

export interface LoadComparison {
  loadMs: LoadSamples;
  baselineLoadMs: LoadSamples;
  cpuMs: LoadSamples;
  baselineCpuMs: LoadSamples;
  /** median load / median baseline load (elapsed time). */
  loadRatio: number;
  /** The same for CPU time. */
  cpuRatio: number;
}

const summary = (xs: number[]): LoadSamples => ({ median: round(median(xs)), samples: xs.map((n) => round(n)) });

/**
 * Loads each bundle and its baseline `runs` times, interleaved (a, a's baseline, b, b's baseline, ... then
 * again), so a busy spell on the machine falls on both sides of a ratio alike. `pairsAtOnce` loads a
 * bundle and its baseline side by side (the tests use it for speed; elapsed times then mean less).
 */
export async function compareLoadTimes(
  pairs: { name: string; file: string; baseline: string }[],
  runs: number,
  nodeOptions: string,
  options: { progress?: (line: string) => void; pairsAtOnce?: boolean; oneCore?: number } = {},
): Promise<Record<string, LoadComparison>> {
  const load = (file: string) => loadTime(file, nodeOptions, options.oneCore);
  const samples = new Map(pairs.map((p) => [p.name, { fn: [] as LoadTime[], base: [] as LoadTime[] }]));
  for (let i = 0; i < runs; i++) {
    options.progress?.(`load run ${i + 1}/${runs}`);
    for (const p of pairs) {
      const s = samples.get(p.name)!;
      if (options.pairsAtOnce) {
        // Half the time; the two processes compete alike, and CPU time hardly notices.
        const [fn, base] = await Promise.all([load(p.file), load(p.baseline)]);
        s.fn.push(fn);
        s.base.push(base);
      } else {
        s.fn.push(await load(p.file));
        s.base.push(await load(p.baseline));
      }
    }
  }
  const out: Record<string, LoadComparison> = {};
  for (const [name, s] of samples) {
    const wall = s.fn.map((x) => x.wallMs);
    const baseWall = s.base.map((x) => x.wallMs);
    const cpu = s.fn.map((x) => x.cpuMs);
    const baseCpu = s.base.map((x) => x.cpuMs);
    out[name] = {
      loadMs: summary(wall),
      baselineLoadMs: summary(baseWall),
      cpuMs: summary(cpu),
      baselineCpuMs: summary(baseCpu),
      loadRatio: round(median(wall) / median(baseWall)),
      cpuRatio: round(median(cpu) / median(baseCpu)),
    };
  }
  return out;
}

/**
 * Builds the functions as they were at a git revision (its own serverless.yml, esbuild options and SDK
 * baselines), from a `git archive` of it beside this tree's node_modules.
 */
async function buildAtRevision(ref: string, outdir: string, names: string[], progress: (line: string) => void) {
  const src = await sourcesAtRevision(ref, outdir);
  const mod = (await import(
    pathToFileURL(join(src, 'scripts', 'bundle-functions.ts')).href
  )) as typeof import('../../scripts/bundle-functions.ts');
  const build = mod.readServerlessBuild(join(src, 'serverless.yml'));
  progress(`building ${ref}'s bundles in ${outdir}`);
  return Promise.all(
    build.functions
      .filter((f) => names.includes(f.name))
      .map(async (fn) => {
        const usage = await mod.sdkUsage(fn.entry);
        const [bundle, baseline] = await Promise.all([
          mod.buildBundle(build, fn.entry, join(outdir, fn.name)),
          mod.buildBundle(
            build,
            { name: `${fn.name}-sdk-baseline`, contents: mod.sdkBaselineSource(usage) },
            join(outdir, fn.name),
          ),
        ]);
        return { name: fn.name, bundle, baseline };
      }),
  );
}

export async function measureBundles(
  options: {
    runs?: number;
    outdir?: string;
    functions?: string[];
    against?: string;
    oneCore?: number;
    progress?: (line: string) => void;
  } = {},
): Promise<BundlesReport> {
  const runs = options.runs ?? 7;
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`runs: expected a whole number ≥ 1, got ${runs}`);
  const progress = options.progress ?? (() => {});
  const build = readServerlessBuild();
  const fns = build.functions.filter((f) => !options.functions || options.functions.includes(f.name));
  const outdir = options.outdir ?? (await mkdtemp(join(tmpdir(), 'ps-bundles-')));
  try {
    progress(`building ${fns.length} bundles and their SDK baselines in ${outdir}`);
    const built = await Promise.all(
      fns.map(async (fn) => {
        const usage = await sdkUsage(fn.entry);
        const [bundle, baseline] = await Promise.all([
          buildBundle(build, fn.entry, join(outdir, fn.name)),
          buildBundle(
            build,
            { name: `${fn.name}-sdk-baseline`, contents: sdkBaselineSource(usage) },
            join(outdir, fn.name),
          ),
        ]);
        return { fn, usage, bundle, baseline };
      }),
    );
    const previous = options.against
      ? await buildAtRevision(
          options.against,
          join(outdir, 'against'),
          built.map((b) => b.fn.name),
          progress,
        )
      : [];
    const loads = await compareLoadTimes(
      [
        ...built.map((b) => ({ name: b.fn.name, file: b.bundle.file, baseline: b.baseline.file })),
        ...previous.map((p) => ({ name: `${p.name}@`, file: p.bundle.file, baseline: p.baseline.file })),
      ],
      runs,
      build.nodeOptions,
      { progress, oneCore: options.oneCore },
    );
    const functions: Record<string, BundleMeasurement> = {};
    for (const b of built) {
      const load = loads[b.fn.name];
      functions[b.fn.name] = {
        bytes: b.bundle.bytes,
        totalBytes: b.bundle.totalBytes,
        startBytes: b.bundle.startBytes,
        chunks: Object.fromEntries(b.bundle.chunks.map((c) => [basename(c.file), c.bytes])),
        baselineBytes: b.baseline.bytes,
        withinSizeCap: b.bundle.totalBytes <= BUNDLE_SIZE_CAP_BYTES,
        ...load,
        withinLoadTarget: load.loadRatio <= LOAD_RATIO_TARGET,
        withinLoadGoal: load.loadRatio <= LOAD_RATIO_GOAL && load.cpuRatio <= LOAD_RATIO_GOAL,
        sdkExports: b.usage.bindings.map((x) => `${x.module}:${x.name}`),
        heaviest: heaviestInputs(b.bundle.metafile),
      };
    }
    const { stdout: node } = await exec(NODE_22, ['--version']);
    const against = options.against
      ? {
          ref: options.against,
          functions: Object.fromEntries(
            previous.map((p) => [
              p.name,
              {
                bytes: p.bundle.bytes,
                totalBytes: p.bundle.totalBytes,
                // Measured with this tree's walk: an older revision's build script may not report it.
                startBytes: bytesAtStart(p.bundle.metafile),
                ...loads[`${p.name}@`],
              },
            ]),
          ),
        }
      : undefined;
    return {
      node: node.trim(),
      nodeOptions: build.nodeOptions,
      runs,
      sizeCapBytes: BUNDLE_SIZE_CAP_BYTES,
      loadRatioTarget: LOAD_RATIO_TARGET,
      loadRatioGoal: LOAD_RATIO_GOAL,
      loadAverage: loadavg().map((x) => round(x)),
      oneCore: options.oneCore ?? null,
      functions,
      ...(against ? { against } : {}),
    };
  } finally {
    if (!options.outdir) await rm(outdir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<BundlesReport> {
  const { values } = parseArgs({
    args,
    options: {
      runs: { type: 'string', default: '7' },
      function: { type: 'string', multiple: true },
      keep: { type: 'string' },
      against: { type: 'string' },
      'one-core': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stderr.write(
      'usage: npm run bench -- bundles [--runs N (default and least 7)] [--function NAME ...] [--keep DIR] [--against GIT-REV] [--one-core CPU]\n',
    );
    process.exit(0);
  }
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < MIN_RUNS)
    throw new UsageError(`--runs: expected a whole number ≥ ${MIN_RUNS}, got ${values.runs}`);
  const oneCore = values['one-core'] === undefined ? undefined : Number(values['one-core']);
  if (oneCore !== undefined && !(Number.isInteger(oneCore) && oneCore >= 0 && oneCore < availableParallelism()))
    throw new UsageError(
      `--one-core: expected a CPU number from 0 to ${availableParallelism() - 1}, got ${values['one-core']}`,
    );
  const known = readServerlessBuild().functions.map((f) => f.name);
  const unknown = (values.function ?? []).filter((f) => !known.includes(f));
  if (unknown.length)
    throw new UsageError(
      `--function: no function ${unknown.join(', ')} in serverless.yml (expected one of ${known.join(', ')})`,
    );
  return measureBundles({
    runs,
    functions: values.function,
    outdir: values.keep,
    against: values.against,
    oneCore,
    progress: (l) => process.stderr.write(`${l}\n`),
  });
}
