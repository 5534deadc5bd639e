/**
 * `npm run soak -- --minutes M --clusters C --pools P --seed S [--json] [--store memory|etcd]`: the chaos
 * soak on the local fleet. Progress goes to stderr; the result (JSON with --json) to stdout. Exits 1 when
 * an invariant was violated. What the functions log is scanned for secrets, and shown with --show-logs.
 */
import { writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { humanReport } from './report.ts';
import { runSoak } from './soak.ts';

const USAGE = `npm run soak -- [options]: the chaos soak on the local fleet (docs/reliability.md)
  --minutes M          how long operations and faults run (default 1), then a quiet phase
  --clusters C         clusters in the fleet (default 1)
  --pools P            edge pools per cluster (default 3)
  --nodes N            nodes per pool (default 2)
  --seed S             seed of the random choices (default: random, printed)
  --store etcd|memory  cluster storage (default etcd: needs the built etcd, npm run kube-bins; stack restarts resume from it)
  --quiesce-seconds Q  the quiet phase (default 120)
  --json               the result as JSON on stdout (progress goes to stderr)
  --show-logs          show what the functions logged
Exits 0 with no violation, 1 with violations, 2 when it could not run.
`;

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a positive number, got "${text}"`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      clusters: { type: 'string' },
      pools: { type: 'string' },
      nodes: { type: 'string' },
      seed: { type: 'string' },
      store: { type: 'string' },
      json: { type: 'boolean' },
      'show-logs': { type: 'boolean' },
      'quiesce-seconds': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const store = values.store ?? 'etcd';
  if (store !== 'etcd' && store !== 'memory') throw new Error(`--store: expected etcd or memory, got "${store}"`);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0)
    throw new Error(`--seed: expected a non-negative integer, got "${values.seed}"`);
  const stateDir = await mkdtemp(join(tmpdir(), 'ps-soak-'));
  try {
    const report = await runSoak({
      minutes: positive('minutes', values.minutes, 1),
      clusters: Math.round(positive('clusters', values.clusters, 1)),
      pools: Math.round(positive('pools', values.pools, 3)),
      nodesPerPool: Math.round(positive('nodes', values.nodes, 2)),
      seed,
      store,
      stateDir,
      quiesceMs: positive('quiesce-seconds', values['quiesce-seconds'], 120) * 1000,
      progress: (line) => writeSync(2, `${line}\n`),
      showLogs: values['show-logs'] ?? false,
    });
    process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${humanReport(report)}\n`);
    return report.violations.length ? 1 : 0;
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`soak: ${(err as Error).message}\n`);
    process.exit(2);
  },
);
