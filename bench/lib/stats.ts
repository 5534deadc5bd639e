/** Small statistics helpers shared by the benchmarks. */

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export const mib = (bytes: number) => round(bytes / (1024 * 1024), 1);

/** Resident set size of another process (Linux /proc), in bytes; undefined if it is gone. */
export async function processRss(pid: number): Promise<number | undefined> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return kb ? Number(kb[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Forces a full garbage collection so memory figures are not skewed by garbage. `npm run bench` runs
 * node without --expose-gc, so the flag is switched on at runtime and the gc function fetched from a
 * fresh context.
 */
export async function collectGarbage(): Promise<void> {
  const v8 = await import('node:v8');
  const vm = await import('node:vm');
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}
