/** The soak's result: JSON for machines (`--json`), a short summary for people. */
import { BOUNDS, type SoakWorld, type Violation } from './world.ts';

export interface SoakReport {
  seed: number;
  minutes: number;
  clusters: number;
  pools: number;
  store: string;
  durationMs: number;
  quiescedInMs: number | null;
  operations: Record<string, { done: number; failed: number; lastError?: string }>;
  faults: Record<string, { done: number; failed: number; lastError?: string }>;
  checks: Record<string, number>;
  violations: Violation[];
  timeToRepairMs: Record<string, { samples: number; p50: number; p99: number; max: number }>;
  bounds: typeof BOUNDS;
  rssMb: { first: number; max: number; last: number };
  fleet: {
    reconciles: number;
    reconcileErrors: number;
    reconcileRequeues: number;
    reconcileTimeouts: number;
    busDeadLetters: number;
    stackRestarts: number;
  };
  secretScan: { charactersScanned: number; textsDropped: number };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0;
}

export function buildReport(
  w: SoakWorld,
  extra: {
    quiescedInMs: number | null;
    rss: { firstMb: number; maxMb: number; lastMb: number };
    scan: { scannedChars: number; dropped: number };
    stats: SoakReport['fleet'];
  },
): SoakReport {
  const ttr: SoakReport['timeToRepairMs'] = {};
  for (const [kind, samples] of Object.entries(w.repairs)) {
    const s = [...samples].sort((a, b) => a - b);
    ttr[kind] = { samples: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? 0 };
  }
  return {
    seed: w.opts.seed,
    minutes: w.opts.minutes,
    clusters: w.opts.clusters,
    pools: w.opts.pools,
    store: w.opts.store,
    durationMs: w.elapsed(),
    quiescedInMs: extra.quiescedInMs,
    operations: w.operations.counts,
    faults: w.faults.counts,
    checks: w.checks,
    violations: w.violations,
    timeToRepairMs: ttr,
    bounds: BOUNDS,
    rssMb: { first: extra.rss.firstMb, max: extra.rss.maxMb, last: extra.rss.lastMb },
    fleet: extra.stats,
    secretScan: { charactersScanned: extra.scan.scannedChars, textsDropped: extra.scan.dropped },
  };
}

const total = (counts: Record<string, { done: number; failed: number }>) =>
  Object.values(counts).reduce((s, c) => s + c.done, 0);

export function humanReport(r: SoakReport): string {
  const lines = [
    `soak: seed ${r.seed}, ${r.clusters} cluster(s) × ${r.pools} pools, ${r.store} store, ${(r.durationMs / 1000).toFixed(0)} s`,
    `operations: ${total(r.operations)} (${Object.entries(r.operations)
      .map(([k, c]) => `${k} ${c.done}${c.failed ? `/${c.failed} failed` : ''}`)
      .join(', ')})`,
    `faults: ${total(r.faults)} (${Object.entries(r.faults)
      .map(([k, c]) => `${k} ${c.done}`)
      .join(', ')})`,
    `checks: ${Object.entries(r.checks)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
    `time to repair (p50/p99 ms): ${Object.entries(r.timeToRepairMs)
      .map(([k, t]) => `${k} ${t.p50}/${t.p99}`)
      .join(', ')}`,
    `quiesced in: ${r.quiescedInMs === null ? 'never (see violations)' : `${r.quiescedInMs} ms`} · rss ${r.rssMb.first} → max ${r.rssMb.max} MB · reconciles ${r.fleet.reconciles} (${r.fleet.reconcileErrors} errors, ${r.fleet.reconcileRequeues} requeues, ${r.fleet.reconcileTimeouts} timeouts)`,
    `violations: ${r.violations.length}`,
    ...r.violations.slice(0, 20).map((v) => `  [${(v.when / 1000).toFixed(1)} s] ${v.invariant}: ${v.what}`),
  ];
  return lines.join('\n');
}
