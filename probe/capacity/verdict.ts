/**
 * Whether memory under the patch storm is bounded: the last third of the run stays within `tolerance` of
 * the middle third's maximum (the first third is warm-up: WAL preallocation, caches), and no sample
 * reaches the limit the etcd container runs under. Pure, so the rule is tested on its own.
 */

export interface VerdictInput {
  /** Seconds since the storm started, and the memory figure then (null when not measured). */
  samples: ReadonlyArray<{ t: number; bytes: number | null }>;
  limitBytes: number;
  /** Allowed growth of the last third over the middle third's maximum, e.g. 0.1 for 10 %. */
  tolerance: number;
}

export interface MemoryVerdict {
  verdict: 'bounded' | 'growing' | 'unknown';
  reason: string;
  peakBytes: number | null;
  middleThirdMaxBytes: number | null;
  lastThirdMaxBytes: number | null;
  limitBytes: number;
}

export function memoryVerdict({ samples, limitBytes, tolerance }: VerdictInput): MemoryVerdict {
  const known = samples.filter((s): s is { t: number; bytes: number } => typeof s.bytes === 'number');
  const base = { limitBytes, peakBytes: null, middleThirdMaxBytes: null, lastThirdMaxBytes: null };
  if (known.length < 3) return { ...base, verdict: 'unknown', reason: `only ${known.length} memory samples (need 3 or more)` };
  const start = known[0].t;
  const span = known[known.length - 1].t - start;
  const third = (s: { t: number }) => Math.min(2, Math.floor(((s.t - start) / (span || 1)) * 3));
  const maxOf = (k: number) => Math.max(...known.filter((s) => third(s) === k).map((s) => s.bytes), -Infinity);
  let middle = maxOf(1);
  let last = maxOf(2);
  // Few samples: fall back to halves of the index range so each part has at least one sample.
  if (!Number.isFinite(middle) || !Number.isFinite(last)) {
    const cut = Math.floor(known.length / 2);
    middle = Math.max(...known.slice(Math.floor(known.length / 3), cut + 1).map((s) => s.bytes));
    last = Math.max(...known.slice(cut + 1).map((s) => s.bytes));
  }
  const peak = Math.max(...known.map((s) => s.bytes));
  const figures = { ...base, peakBytes: peak, middleThirdMaxBytes: middle, lastThirdMaxBytes: last };
  const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;
  if (peak >= limitBytes) {
    return { ...figures, verdict: 'growing', reason: `peak ${mib(peak)} reached the ${mib(limitBytes)} limit: the container would be OOM-killed` };
  }
  if (last > middle * (1 + tolerance)) {
    return {
      ...figures,
      verdict: 'growing',
      reason: `last third peaked at ${mib(last)}, ${Math.round((last / middle - 1) * 100)} % above the middle third's ${mib(middle)} (tolerance ${Math.round(tolerance * 100)} %)`,
    };
  }
  return {
    ...figures,
    verdict: 'bounded',
    reason: `last third peaked at ${mib(last)}, within ${Math.round(tolerance * 100)} % of the middle third's ${mib(middle)}, below the ${mib(limitBytes)} limit`,
  };
}
