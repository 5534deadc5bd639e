/**
 * spiritctl's arguments, fuzzed (seeded): unknown flags, missing values, values on boolean flags, and bad
 * numbers, durations, percentages, selectors, ids, table names and endpoints. The CLI's own `main()` runs
 * in process for thousands of cases, plus about twenty real `bin/spiritctl.mjs` processes. A bad argument
 * must end with exit code 2 and a message naming the flag — never a stack trace.
 * Long-running commands (local up, local cluster, forwarder, probe capacity) only get arguments that are
 * invalid by construction, so no case can start a fleet.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLabel } from '../../cli/commands/clusters.ts';
import { commands } from '../../cli/commands/index.ts';
import { parseDuration, parseLimit } from '../../core/rollout/limits.ts';
import { type FakeDynamo, startFakeDynamo } from '../support/fake-dynamo.ts';
import { fuzzSeed, nastyString, Rng } from '../support/fuzz.ts';
import { captureOutput, type OutputCapture } from '../support/output-capture.ts';

const SEED = fuzzSeed();
const PARSE_CASES = 2000;
const VALUE_CASES = 2000;
/** Share of value cases for flags checked only after the state table is opened (each costs ~30 ms). */
const TABLE_BACKED_SHARE = 0.07;
const STACK_TRACE = /^\s+at .+[:(]\d+:\d+\)?$/m;
const TABLE = 'fuzz-cli-table';
/** No argument may leave the CLI without an answer; -2 marks one that did (the first call loads the AWS SDK). */
const HANG_MS = 15_000;

type Main = (argv: string[]) => Promise<number>;

/** cli/main.ts runs main() when imported: import it once with argv `--help`, output swallowed. */
async function loadMain(): Promise<Main> {
  const { argv, exitCode } = process;
  process.argv = [argv[0], 'spiritctl', '--help'];
  const quiet = captureOutput();
  try {
    return (await import('../../cli/main.ts')).main;
  } finally {
    quiet.stop();
    process.argv = argv;
    process.exitCode = exitCode;
  }
}

/** Integer-flag values no range accepts: not a whole number in ASCII digits, negative, or huge. */
const BAD_INTS = [
  'abc',
  '1.5',
  '-3',
  '1e3',
  '0x10',
  '',
  ' ',
  '٣',
  '１',
  '99999999999',
  'NaN',
  'Infinity',
  '+1',
  '1_000',
  '5 5',
  '--5',
  '\u0000',
  '7💥',
  'x'.repeat(5000),
];
const BAD_CHOICES = [
  '',
  'MEMORY',
  'etcd ',
  'mem',
  'real',
  '💥',
  'memory,etcd',
  'x'.repeat(3000),
  '__proto__',
  'constructor',
];
const BAD_LABELS = [
  'Upper Case',
  '',
  '-x',
  'x_',
  '💥',
  'trailing-',
  'name.',
  'constructor ',
  '../x',
  'UPPER',
  'a'.repeat(64),
];

const LONG_RUNNING: Record<string, Record<string, string[]>> = {
  'local up': {
    clusters: BAD_INTS,
    pools: BAD_INTS,
    'nodes-per-pool': BAD_INTS,
    'cloud-pools': BAD_INTS,
    'ready-delay': BAD_INTS,
    timeout: BAD_INTS,
    store: BAD_CHOICES,
    kubelet: BAD_CHOICES,
  },
  'local cluster': { port: BAD_INTS, store: BAD_CHOICES, name: BAD_LABELS },
};

const throws = (f: () => unknown) => {
  try {
    f();
    return false;
  } catch {
    return true;
  }
};

/** A value for a validated flag of a state-table command, and whether the CLI must refuse it. */
type Oracle = (value: string) => boolean;
const badDuration: Oracle = (v) => throws(() => parseDuration('x', v));
const VALUE_FLAGS: Record<string, Record<string, { gen: (rng: Rng) => string; bad: Oracle }>> = {
  'rollout start': {
    selector: {
      gen: (r) => selectorText(r),
      bad: (v) =>
        v
          .split(',')
          .filter(Boolean)
          .some((l) => throws(() => parseLabel('selector', l))),
    },
    patch: {
      gen: (r) => r.pick(['{', '[1,', 'null}', "{'a':1}", '{"a":', nastyString(r), '@/nonexistent/patch.json', '@']),
      bad: () => true,
    },
    table: { gen: tableText, bad: (v) => !/^[A-Za-z0-9_.-]{3,255}$/.test(v) },
    'dynamo-endpoint': {
      gen: (r) => r.pick(['localhost:8000', 'ftp://x', 'http//x', '', ' http://x', 'http://', nastyString(r)]),
      bad: (v) => !/^https?:\/\/[^/\s]+/.test(v),
    },
  },
  'clusters list': {
    selector: { gen: (r) => selectorText(r).split(',')[0] ?? '', bad: (v) => throws(() => parseLabel('selector', v)) },
    table: { gen: tableText, bad: (v) => !/^[A-Za-z0-9_.-]{3,255}$/.test(v) },
  },
  'rollout status': {
    interval: { gen: (r) => durationText(r), bad: (v) => badDuration(v) || parseDuration('x', v) < 100 },
  },
  'probe leaders': {
    cluster: { gen: (r) => r.pick(['UPPER', 'a_b', '-x', 'x'.repeat(70), '💥', '', 'a.b']), bad: () => true },
  },
};

/** Checked by the rollout's own validation, after the state table is opened (the flag names come back mapped). */
const TABLE_BACKED_FLAGS: Record<string, { gen: (rng: Rng) => string; bad: Oracle }> = {
  'max-concurrency': { gen: (r) => limitText(r), bad: (v) => throws(() => parseLimit('x', v, 1)) },
  'max-failures': { gen: (r) => limitText(r), bad: (v) => throws(() => parseLimit('x', v, 0)) },
  soak: { gen: (r) => durationText(r), bad: badDuration },
  'progress-deadline': { gen: (r) => durationText(r), bad: badDuration },
  id: { gen: (r) => r.pick(['UPPER', 'a_b', '-lead', 'trail-', 'x'.repeat(64), 'a#b', '💥', ' ']), bad: () => true },
  version: { gen: (r) => r.pick(['', ' 1.0', '1.0 ', '../1', '💥', 'x'.repeat(200), 'v1/2']), bad: () => true },
};

function limitText(r: Rng): string {
  return r.pick([
    () => `${r.int(120)}%`,
    () => `${r.int(5)}`,
    () => `${-r.int(5)}`,
    () => `${r.int(1000)}%%`,
    () => '%',
    () => '1.5',
    () => '25 %',
    () => '１',
    () => 'x'.repeat(2000),
    () => String(10 ** (6 + r.int(3))),
    () => nastyString(r),
  ])();
}
function durationText(r: Rng): string {
  return r.pick([
    () => `${r.int(100)}${r.pick(['ms', 's', 'm', 'h', 'd', 'M', 'w', '', 'sec', ' s'])}`,
    () => `-${r.int(9)}m`,
    () => '1h-1m',
    () => '1e3s',
    () => '∞',
    () => `${r.int(9)}m${r.int(9)}`,
    () => '0',
    () => '',
    () => nastyString(r),
    () => '1h30m',
  ])();
}
function selectorText(r: Rng): string {
  const label = () =>
    r.pick([
      'region=eu',
      'a',
      '=v',
      'k=',
      'k=v=w',
      'K K=v',
      '-k=v',
      'example.com/tier=gold',
      `${'k'.repeat(70)}=v`,
      `k=${'v'.repeat(70)}`,
      'k=💥',
      nastyString(r),
    ]);
  return Array.from({ length: 1 + r.int(3) }, label).join(',');
}
function tableText(r: Rng): string {
  return r.pick(['ab', 'a b c', 'x'.repeat(300), 'täble', '', 'tab/le', 'ok-table', nastyString(r)]);
}

/** A flag name no command has. */
function unknownFlag(r: Rng, known: Set<string>): string {
  for (;;) {
    const name = r.pick([
      () => `--${Array.from({ length: 1 + r.int(12) }, () => 'abcdefghijklmnopqrstuvwxyz-'[r.int(27)]).join('')}`,
      () => `--${nastyString(r).slice(0, 30).replace(/=/g, '')}`,
      () => `-${'qwxyzQWXYZ'[r.int(10)]}`,
      () => '--constructor',
      () => '--__proto__',
      () => `---${r.int(100)}`,
      () => '--💥',
    ])();
    const bare = name.replace(/^-+/, '');
    if (bare && !known.has(bare) && bare !== 'help' && !/^-?h$/.test(name)) return name;
  }
}

describe(`fuzzed spiritctl arguments (seed ${SEED}; replay with PS_FUZZ_SEED=${SEED})`, () => {
  let main: Main;
  let dynamo: FakeDynamo;
  let capture: OutputCapture;
  let scratch: string;

  beforeAll(async () => {
    main = await loadMain();
    dynamo = await startFakeDynamo(TABLE);
    scratch = await mkdtemp(join(tmpdir(), 'ps-fuzz-cli-'));
  }, 60_000);
  afterAll(async () => {
    capture?.stop();
    await dynamo?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** Runs main in process; returns its code and what it wrote to stderr. */
  async function run(argv: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
    capture = captureOutput();
    let timer: NodeJS.Timeout | undefined;
    try {
      const hang = new Promise<number>((resolve) => (timer = setTimeout(() => resolve(-2), HANG_MS)));
      const code = await Promise.race([main(argv), hang]);
      const stderr = capture.writes
        .filter((w) => w.stream === 'stderr' || w.stream === 'console.error')
        .map((w) => w.text)
        .join('');
      const stdout = capture.writes
        .filter((w) => w.stream === 'stdout')
        .map((w) => w.text)
        .join('');
      return { code, stderr, stdout };
    } finally {
      clearTimeout(timer);
      capture.stop();
    }
  }

  const usage = (r: { code: number; stderr: string }, flag: string) =>
    r.code === 2 && r.stderr.includes(flag) && !STACK_TRACE.test(r.stderr);
  const shortText = (s: string) =>
    s.length > 60 ? `${JSON.stringify(s.slice(0, 40))}…(${s.length})` : JSON.stringify(s);

  it(`${PARSE_CASES} malformed command lines (unknown flags, missing values, values on switches): exit 2 naming the flag`, async () => {
    const rng = new Rng(SEED);
    const problems: string[] = [];
    const kinds: Record<string, number> = {};
    for (let i = 0; i < PARSE_CASES; i++) {
      const cmd = rng.pick(commands);
      const options = Object.entries(cmd.options);
      const known = new Set([...options.map(([k]) => k), ...options.flatMap(([, o]) => (o.short ? [o.short] : []))]);
      const strings = options.filter(([, o]) => o.type === 'string').map(([k]) => k);
      const booleans = [...options.filter(([, o]) => o.type === 'boolean').map(([k]) => k), 'help'];
      const kind = rng.pick(['unknown', 'missing', 'ambiguous', 'switch-value'] as const);
      let argv: string[];
      let flag: string;
      if (kind === 'unknown' || (kind !== 'switch-value' && strings.length === 0)) {
        flag = unknownFlag(rng, known);
        argv = rng.chance(0.5) ? [flag] : [flag, nastyString(rng)];
        flag = flag.replace(/=.*$/, '');
      } else if (kind === 'missing') {
        flag = `--${rng.pick(strings)}`;
        argv = [flag];
      } else if (kind === 'ambiguous') {
        flag = `--${rng.pick(strings)}`;
        argv = [flag, `--${rng.pick([...strings, ...booleans])}`];
      } else {
        flag = `--${rng.pick(booleans)}`;
        argv = [`${flag}=${rng.pick(['yes', '', '0', nastyString(rng)])}`];
      }
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      const r = await run([...cmd.path, ...argv]);
      if (!usage(r, flag))
        problems.push(
          `case ${i}: spiritctl ${cmd.path.join(' ')} ${argv.map(shortText).join(' ')} → exit ${r.code}: ${r.stderr.slice(0, 200)}`,
        );
    }
    console.info(`fuzzed command lines (seed ${SEED}): ${JSON.stringify(kinds)}`);
    expect(problems, `${problems.length} problems in ${PARSE_CASES} cases`).toEqual([]);
  }, 60_000);

  it(`${VALUE_CASES} bad flag values (numbers, durations, percentages, selectors, ids, tables, endpoints): exit 2 naming the flag`, async () => {
    const rng = new Rng(SEED + 1);
    const problems: string[] = [];
    let refused = 0;
    const state = ['--dynamo-endpoint', dynamo.endpoint, '--table', TABLE];
    for (let i = 0; i < VALUE_CASES; i++) {
      let argv: string[];
      let flag: string;
      let mustRefuse: boolean;
      if (rng.chance(0.3)) {
        const command = rng.pick(Object.keys(LONG_RUNNING));
        const name = rng.pick(Object.keys(LONG_RUNNING[command]));
        flag = `--${name}`;
        // Paths into a scratch dir: even a wrongly accepted value must not write into the repository.
        const sandbox =
          command === 'local up'
            ? ['--state-dir', scratch, '--kubeconfig-dir', scratch]
            : ['--kubeconfig', join(scratch, 'kubeconfig')];
        argv = [...command.split(' '), ...sandbox, flag, rng.pick(LONG_RUNNING[command][name])];
        mustRefuse = true;
      } else if (rng.chance(TABLE_BACKED_SHARE / 0.7)) {
        const name = rng.pick(Object.keys(TABLE_BACKED_FLAGS));
        const { gen, bad } = TABLE_BACKED_FLAGS[name];
        const value = gen(rng);
        flag = `--${name}`;
        mustRefuse = bad(value);
        argv = ['rollout', 'start', '--version', '0.2.0', '--id', `fuzz-${i}`, ...state, flag, value];
      } else {
        const command = rng.pick(Object.keys(VALUE_FLAGS));
        const name = rng.pick(Object.keys(VALUE_FLAGS[command]));
        const { gen, bad } = VALUE_FLAGS[command][name];
        const value = gen(rng);
        flag = `--${name}`;
        mustRefuse = bad(value);
        const base =
          command === 'rollout start'
            ? ['--version', '0.2.0', '--id', `fuzz-${i}`]
            : command === 'rollout status'
              ? ['r1', '--watch']
              : [];
        // The flag under test goes last so it overrides a default given in `state`.
        argv = [...command.split(' '), ...base, ...state, flag, value];
      }
      const r = await run(argv);
      const shown = `case ${i}: spiritctl ${argv.map(shortText).join(' ')} → exit ${r.code}: ${r.stderr.slice(0, 200)}`;
      if (STACK_TRACE.test(r.stderr)) problems.push(`${shown} (stack trace)`);
      else if (mustRefuse) {
        refused++;
        if (!usage(r, flag)) problems.push(shown);
      } else if (![0, 1, 2].includes(r.code)) problems.push(`${shown} (a valid value, yet exit ${r.code})`);
    }
    console.info(`fuzzed flag values (seed ${SEED}): ${refused} refused of ${VALUE_CASES}`);
    expect(problems, `${problems.length} problems in ${VALUE_CASES} cases`).toEqual([]);
    expect(refused).toBeGreaterThan(VALUE_CASES * 0.6);
  }, 120_000);
});
