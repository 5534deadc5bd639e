import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';

/** PutEvents limits (EventBridge quotas): entries per call and bytes per call/entry. */
export const MAX_ENTRIES_PER_CALL = 10;
export const MAX_BYTES_PER_CALL = 256 * 1024;

const utf8 = (s: string | undefined) => (s ? Buffer.byteLength(s, 'utf8') : 0);

/** Size of one entry as EventBridge counts it (Time 14 bytes, then the UTF-8 bytes of each field). */
export function entrySize(entry: PutEventsRequestEntry): number {
  let size = entry.Time ? 14 : 0;
  size += utf8(entry.Source) + utf8(entry.DetailType) + utf8(entry.Detail) + utf8(entry.EventBusName);
  for (const r of entry.Resources ?? []) size += utf8(r);
  return size;
}

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
