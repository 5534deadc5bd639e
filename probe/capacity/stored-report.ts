/**
 * The report as the state table stores it (`--table`): one item, and a DynamoDB item holds at most 400 KB. A
 * long storm's samples (one a second, each with the pod's cgroups) make a report of a megabyte or more, so the
 * stored copy keeps every k-th sample of each storm, the first and last, and the one of the highest memory, with
 * the smallest k that fits; the JSON printed and written to files keeps them all.
 */

/** Room left for the item's keys and attributes under DynamoDB's 400 KB. */
export const STORED_REPORT_MAX_BYTES = 380_000;

interface Sampled {
  t: number;
  memoryBytes?: number | null;
  rssBytes?: number | null;
  pod?: { workingSetBytes: number } | null;
}

interface WithStorms<S extends Sampled> {
  patchStorm: Record<string, { storm: { samples: S[] } } | null>;
}

export interface StoredSamples {
  /** Every `every`-th sample kept (plus the first, the last and the highest), `kept` of `taken`. */
  every: number;
  kept: number;
  taken: number;
}

export class StoredReportTooLargeError extends Error {
  constructor(bytes: number, maxBytes: number) {
    super(
      `capacity probe report: ${bytes} bytes even with its storms' samples thinned to a few, above the ${maxBytes} a table item can hold; keep the printed JSON instead`,
    );
    this.name = 'StoredReportTooLargeError';
  }
}

export function reportForStorage<S extends Sampled, R extends WithStorms<S>>(
  report: R,
  maxBytes: number = STORED_REPORT_MAX_BYTES,
): { report: R; samples: StoredSamples | null } {
  const size = (r: unknown) => Buffer.byteLength(JSON.stringify(r));
  if (size(report) <= maxBytes) return { report, samples: null };
  const taken = Math.max(0, ...Object.values(report.patchStorm).map((s) => s?.storm.samples.length ?? 0));
  for (let every = 2; every <= Math.max(2, taken); every *= 2) {
    let kept = 0;
    const patchStorm = Object.fromEntries(
      Object.entries(report.patchStorm).map(([side, s]) => {
        if (!s) return [side, s];
        const samples = thinned(s.storm.samples, every);
        kept = Math.max(kept, samples.length);
        return [side, { ...s, storm: { ...s.storm, samples } }];
      }),
    );
    const candidate = { ...report, patchStorm };
    if (size(candidate) <= maxBytes) return { report: candidate, samples: { every, kept, taken } };
  }
  throw new StoredReportTooLargeError(size(report), maxBytes);
}

function thinned<S extends Sampled>(samples: readonly S[], every: number): S[] {
  const memory = (s: S) => s.pod?.workingSetBytes ?? s.memoryBytes ?? s.rssBytes ?? -1;
  let highest = 0;
  samples.forEach((s, i) => {
    const top = samples[highest];
    if (top && memory(s) > memory(top)) highest = i;
  });
  return samples.filter((_, i) => i % every === 0 || i === samples.length - 1 || i === highest);
}
