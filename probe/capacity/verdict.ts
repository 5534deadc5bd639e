/**
 * Whether memory under the patch storm is bounded: the last third of the run (after the raft log has
 * filled, see `warmupUpdates`) stays within `tolerance` of the middle third's maximum (the first third is
 * warm-up: WAL preallocation, caches), and no sample
 * reaches the limit the etcd container runs under. Pure, so the rule is tested on its own.
 *
 * The allowed growth is never less than one WAL segment (`stepBytes`, 64 MiB): etcd allocates its WAL in
 * tmpfs a preallocated segment at a time, so a bounded etcd's memory is a sawtooth with 64 MiB teeth, and
 * 10 % of ~600 MiB is smaller than one tooth (measured: db flat at 88 MB, memory 593 → 652 MiB when a
 * segment was cut in the last second). Growth beyond a segment is growth.
 */

export interface VerdictInput {
  /** Seconds since the storm started, updates done by then, and the memory figure then (null when not measured). */
  samples: ReadonlyArray<{ t: number; bytes: number | null; updates?: number }>;
  /**
   * Updates before etcd's memory can be steady: raft keeps up to snapshot-count entries plus 5,000
   * catch-up entries in memory, so RSS climbs until that many updates have passed — 57-76 s at the
   * local API's 130-175 updates/s. Thirds are taken after it (when at least 6 samples remain).
   */
  warmupUpdates?: number;
  limitBytes: number;
  /** Allowed growth of the last third over the middle third's maximum, e.g. 0.1 for 10 %. */
  tolerance: number;
  /** Growth always allowed, whatever the tolerance: one WAL segment by default. */
  stepBytes?: number;
}

/** etcd's WAL segment size (wal.SegmentSizeBytes), preallocated in tmpfs. */
export const WAL_SEGMENT_BYTES = 64 * 2 ** 20;

export interface MemoryVerdict {
  verdict: 'bounded' | 'growing' | 'unknown';
  reason: string;
  peakBytes: number | null;
  middleThirdMaxBytes: number | null;
  lastThirdMaxBytes: number | null;
  limitBytes: number;
  /** Where the thirds start (after the raft log's warm-up), seconds into the storm. */
  judgedFromSeconds: number | null;
}

export function memoryVerdict({
  samples,
  limitBytes,
  tolerance,
  stepBytes = WAL_SEGMENT_BYTES,
  warmupUpdates = 0,
}: VerdictInput): MemoryVerdict {
  const measured = samples.filter(
    (s): s is { t: number; bytes: number; updates?: number } => typeof s.bytes === 'number',
  );
  const base = {
    limitBytes,
    peakBytes: null,
    middleThirdMaxBytes: null,
    lastThirdMaxBytes: null,
    judgedFromSeconds: null,
  };
  if (measured.length < 3)
    return { ...base, verdict: 'unknown', reason: `only ${measured.length} memory samples (need 3 or more)` };
  const steady = measured.filter((s) => (s.updates ?? Infinity) >= warmupUpdates);
  const known = steady.length >= 6 ? steady : measured;
  const [first] = known;
  const final = known.at(-1);
  if (!first || !final) return { ...base, verdict: 'unknown', reason: 'no memory samples' };
  const after =
    known === steady && warmupUpdates > 0
      ? `, judged from ${first.t} s once ${warmupUpdates} updates filled the raft log`
      : '';
  const start = first.t;
  const span = final.t - start;
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
  // The limit counts over the whole storm, warm-up included: an OOM kill does not wait for steady state.
  const peak = Math.max(...measured.map((s) => s.bytes));
  const figures = {
    ...base,
    peakBytes: peak,
    middleThirdMaxBytes: middle,
    lastThirdMaxBytes: last,
    judgedFromSeconds: first.t,
  };
  const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;
  if (peak >= limitBytes) {
    return {
      ...figures,
      verdict: 'growing',
      reason: `peak ${mib(peak)} reached the ${mib(limitBytes)} limit: the container would be OOM-killed`,
    };
  }
  const allowed = Math.max(middle * tolerance, stepBytes);
  const allowance = `tolerance ${Math.round(tolerance * 100)} % or one ${mib(stepBytes)} WAL segment, whichever is more`;
  if (last > middle + allowed) {
    return {
      ...figures,
      verdict: 'growing',
      reason: `last third peaked at ${mib(last)}, ${mib(last - middle)} (${Math.round((last / middle - 1) * 100)} %) above the middle third's ${mib(middle)} (${allowance}${after})`,
    };
  }
  return {
    ...figures,
    verdict: 'bounded',
    reason: `last third peaked at ${mib(last)}, within ${mib(allowed)} of the middle third's ${mib(middle)} (${allowance}${after}), below the ${mib(limitBytes)} limit`,
  };
}
