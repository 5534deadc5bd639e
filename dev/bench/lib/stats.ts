/** Small statistics helpers shared by the benchmarks; the order statistics live in shared/ (the probe uses them too). */
import { round } from '../../../shared/stats.ts';

export { median, percentile, round } from '../../../shared/stats.ts';

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

/**
 * CPU time the hypervisor gave to others while this guest wanted it (the `steal` column of Linux's /proc/stat,
 * all CPUs), in seconds since boot; undefined where there is no /proc/stat. /proc/stat counts in USER_HZ,
 * which Linux fixes at 100 for user space.
 */
export async function hostStealSeconds(): Promise<number | undefined> {
  const { readFile } = await import('node:fs/promises');
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? '';
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== 'cpu' || fields.length < 9) return undefined;
    return Number(fields[8]) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Starts counting steal; `stop` gives the seconds stolen since and their share of the machine's CPU time over
 * `wallSeconds` (steal ÷ (wall × CPUs)), both undefined without /proc/stat. `read` is the counter (tests
 * give their own).
 */
export async function stealMeter(read: () => Promise<number | undefined> = hostStealSeconds): Promise<{
  stop(wallSeconds: number): Promise<{ seconds?: number; share?: number }>;
}> {
  const { availableParallelism } = await import('node:os');
  const start = await read();
  return {
    async stop(wallSeconds) {
      const end = await read();
      if (start === undefined || end === undefined) return {};
      const seconds = end - start;
      return { seconds: round(seconds, 2), share: round(seconds / (wallSeconds * availableParallelism()), 3) };
    },
  };
}
