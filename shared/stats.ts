/** Order statistics for latency and size figures, shared by the capacity probe and the benchmarks. */

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const upper = s[mid];
  if (upper === undefined) return NaN;
  return s.length % 2 ? upper : ((s[mid - 1] ?? upper) + upper) / 2;
}

/** The largest value, or `floor` when there is none larger; a loop, not a spread, so any count works. */
export function max(values: readonly number[], floor = -Infinity): number {
  let m = floor;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))] ?? NaN;
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
