/** Pure rendering of the local fleet's convergence: a compact terminal view and JSON lines. */

export interface ClusterProgress {
  id: string;
  /** Edge pools that should have a pool-spirit. */
  wanted: number;
  available: number;
  /** PoolSpirits reporting Invalid or an error condition. */
  failing: number;
}

export interface FleetProgress {
  elapsedMs: number;
  clusters: ClusterProgress[];
  eventsRouted: number;
  deadLetters: number;
  reconciles: number;
  errors: number;
}

const BAR = 20;

function bar(done: number, total: number): string {
  const filled = total === 0 ? BAR : Math.round((done / total) * BAR);
  return '█'.repeat(filled) + '░'.repeat(BAR - filled);
}

export function totals(p: FleetProgress) {
  const wanted = p.clusters.reduce((n, c) => n + c.wanted, 0);
  const available = p.clusters.reduce((n, c) => n + c.available, 0);
  return { wanted, available, converged: wanted === available && p.clusters.every((c) => c.failing === 0) };
}

/** Lines for a terminal: one per cluster (long fleets are summarised), then a totals line. */
export function renderProgress(p: FleetProgress, maxClusterLines = 12): string[] {
  const lines: string[] = [];
  const width = Math.max(7, ...p.clusters.map((c) => c.id.length));
  const shown =
    p.clusters.length > maxClusterLines
      ? p.clusters.filter((c) => c.available < c.wanted).slice(0, maxClusterLines)
      : p.clusters;
  for (const c of shown) {
    const fail = c.failing ? `  ${c.failing} failing` : '';
    lines.push(
      `${c.id.padEnd(width)}  ${bar(c.available, c.wanted)}  ${String(c.available).padStart(3)}/${c.wanted} available${fail}`,
    );
  }
  if (shown.length < p.clusters.length)
    lines.push(`… ${p.clusters.length - shown.length} more clusters${shown.length ? '' : ', all converged'}`);
  const t = totals(p);
  lines.push(
    `${'fleet'.padEnd(width)}  ${bar(t.available, t.wanted)}  ${t.available}/${t.wanted} pools available in ${p.clusters.length} clusters · ` +
      `${p.eventsRouted} events routed · ${p.reconciles} reconciles · ${p.errors} errors · ${p.deadLetters} dead letters · ${(p.elapsedMs / 1000).toFixed(1)} s`,
  );
  return lines;
}

/** One machine-readable progress line (for `--json`). */
export function progressJson(p: FleetProgress): string {
  const t = totals(p);
  return JSON.stringify({ type: 'progress', ...t, ...p });
}

/**
 * What a progress line reports that matters to a reader: convergence per cluster, errors, dead letters.
 * Routine traffic (leader renewals every 30 s, scheduled ticks) moves the event and reconcile counters of
 * an idle stack, so printing only when this changes keeps a converged, idle stack quiet.
 */
export function progressState(p: FleetProgress): string {
  return JSON.stringify({ clusters: p.clusters, errors: p.errors, deadLetters: p.deadLetters });
}
