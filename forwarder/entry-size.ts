import { entrySize, MAX_ENTRIES_PER_CALL, MAX_ENTRIES_SIZE_BYTES } from '../events/put-events-limits.ts';

export { entrySize, MAX_ENTRIES_PER_CALL };
export const MAX_BYTES_PER_CALL = MAX_ENTRIES_SIZE_BYTES;

/** Splits entries, in order, into PutEvents calls that respect both limits. */
export function toBatches<T>(items: T[], sizeOf: (item: T) => number): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (current.length === MAX_ENTRIES_PER_CALL || (current.length > 0 && bytes + size > MAX_BYTES_PER_CALL)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length) batches.push(current);
  return batches;
}
