/**
 * The soak's shared state: the running fleet (replaced when the stack is restarted), what the soak did
 * (operations and faults by kind), what it expects (deleted pools, injected foreign entries, inputs that can
 * never succeed) and what it found (violations, repair times).
 */

import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import type { FleetCluster, LocalFleet } from '../local/fleet/fleet.ts';
import { Rng } from './rng.ts';

/** The bounds the invariants hold the system to (docs/reliability.md states them). */
export const BOUNDS = {
  /** An Edge pool with a Ready node is Available within this long of its last disturbance or the last fault. */
  availableMs: 45_000,
  /** A foreign sidecar or Service port is gone within this long of being added (or of the last fault). */
  foreignMs: 30_000,
  /** Everything of a deleted NodePool, and any other orphan, is gone within this long. */
  deletionMs: 30_000,
  /** A table lease may stay recorded this long past its expiry before it counts as stuck. */
  leaseGraceMs: 120_000,
  /** The soak process (the whole stack runs in it) stays under this resident size. */
  rssMb: 1_536,
};

export interface Violation {
  invariant: string;
  what: string;
  /** ms since the soak started. */
  when: number;
  evidence: Record<string, unknown>;
}

export interface SoakOptions {
  minutes: number;
  clusters: number;
  pools: number;
  nodesPerPool: number;
  seed: number;
  store: 'memory' | 'etcd';
  stateDir: string;
  /** How long the quiet phase at the end may take to converge. */
  quiesceMs: number;
  /** Progress lines; write them past process.stdout/stderr (fs.writeSync), which the soak captures. */
  progress: (line: string) => void;
  /** Also print what the functions log (it is always scanned for secrets). */
  showLogs?: boolean;
}

/** An error as one short line (a kube Status message when there is one). */
export function errorText(err: unknown): string {
  const e = err as { code?: number; body?: { message?: string }; message?: string };
  return `${e?.code ? `${e.code} ` : ''}${e?.body?.message ?? e?.message ?? String(err)}`.slice(0, 200);
}

export class Counter {
  readonly counts: Record<string, { done: number; failed: number; lastError?: string }> = {};
  add(kind: string, ok = true, error?: unknown): void {
    this.counts[kind] ??= { done: 0, failed: 0 };
    const c = this.counts[kind];
    if (ok) c.done++;
    else c.failed++;
    if (error !== undefined) c.lastError = errorText(error);
  }
  done(kind: string): number {
    return this.counts[kind]?.done ?? 0;
  }
}

/** The last few minutes of what the soak did, for the evidence of a violation. */
export class Journal {
  readonly #entries: { at: number; clusterId?: string; pool?: string; what: string }[] = [];
  readonly #startedAt: number;
  constructor(startedAt: number) {
    this.#startedAt = startedAt;
  }
  add(what: string, clusterId?: string, pool?: string): void {
    this.#entries.push({ at: Date.now(), clusterId, pool, what });
    const old = Date.now() - 180_000;
    while (this.#entries.length && this.#entries[0].at < old) this.#entries.shift();
  }
  /** Entries about this pool, its cluster as a whole, or the fleet, as `[s since start] what`. */
  recent(clusterId: string, pool: string): string[] {
    return this.#entries
      .filter(
        (e) => (e.clusterId === undefined || e.clusterId === clusterId) && (e.pool === undefined || e.pool === pool),
      )
      .slice(-25)
      .map(
        (e) =>
          `[${((e.at - this.#startedAt) / 1000).toFixed(1)} s] ${e.clusterId ?? 'fleet'}${e.pool ? `/${e.pool}` : ''}: ${e.what}`,
      );
  }
}

export class SoakWorld {
  fleet: LocalFleet;
  readonly opts: SoakOptions;
  readonly rng: Rng;
  readonly startedAt = Date.now();
  readonly journal = new Journal(this.startedAt);
  readonly operations = new Counter();
  readonly faults = new Counter();
  readonly checks: Record<string, number> = {};
  readonly violations: Violation[] = [];
  /** Ends of global faults: no bound runs while one is active, and each starts counting at its end. */
  calmSince = Date.now();
  activeFaults = 0;
  /** `cluster/pool` → when the soak last changed something of that pool. */
  readonly disturbed = new Map<string, number>();
  /** `cluster/pool` → a spec the reconciler must refuse is in place. */
  readonly invalidSpec = new Set<string>();
  /** Pools the soak deleted, and when. */
  readonly deletions = new Map<string, number>();
  /** Cluster ids registered with access that can never work: their events may dead-letter. */
  readonly terminalClusters = new Set<string>();
  /** Time-to-repair samples per fault kind (ms from the fault's end to the fleet being whole again). */
  readonly repairs: Record<string, number[]> = {};
  /** Faults ended and not yet repaired. */
  pendingRepairs: { kind: string; endedAt: number }[] = [];
  /** Rollouts started and not yet finished or aborted. */
  readonly rollouts = new Set<string>();
  nextId = 0;

  constructor(fleet: LocalFleet, opts: SoakOptions) {
    this.fleet = fleet;
    this.opts = opts;
    this.rng = new Rng(opts.seed);
  }

  elapsed(at = Date.now()): number {
    return at - this.startedAt;
  }

  api(c: FleetCluster): RawObjectApi {
    return RawObjectApi.fromKubeConfig(c.kubeConfig);
  }

  cluster(): FleetCluster {
    return this.rng.pick(this.fleet.clusters.filter((c) => !this.terminalClusters.has(c.id)))!;
  }

  /** Records that the soak changed something of a pool (its bounds restart). */
  touch(clusterId: string, pool: string, what = this.currentOp): void {
    this.disturbed.set(`${clusterId}/${pool}`, Date.now());
    this.journal.add(what, clusterId, pool);
  }
  currentOp = '';

  violate(invariant: string, what: string, evidence: Record<string, unknown>): void {
    this.violations.push({ invariant, what, when: this.elapsed(), evidence });
    this.opts.progress(`VIOLATION ${invariant}: ${what}`);
  }

  /** Runs a global fault: bounds pause while it lasts and restart at its end; its repair is timed. */
  async fault(kind: string, run: () => Promise<void>): Promise<void> {
    this.activeFaults++;
    this.faults.add(kind);
    this.journal.add(`fault ${kind} begins`);
    try {
      await run();
    } finally {
      this.journal.add(`fault ${kind} ends`);
      this.activeFaults--;
      this.calmSince = Date.now();
      this.pendingRepairs.push({ kind, endedAt: Date.now() });
    }
  }
}
