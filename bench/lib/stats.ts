/** Small statistics helpers shared by the benchmarks; the order statistics live in common/ (the probe uses them too). */
import { round } from '../../common/stats.ts';

export { median, percentile, round } from '../../common/stats.ts';

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
