/**
 * EventBridge PutEvents quotas and its entry-size rule ("Calculating PutEvents event entry size"): the
 * forwarder batches by them and the local bus enforces them, so both read them from here.
 */
export const MAX_ENTRIES_PER_CALL = 10;
export const MAX_ENTRIES_SIZE_BYTES = 256 * 1024;

/** The fields that count towards an entry's size, as they may arrive on the wire (any type). */
export interface SizedEntry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  Resources?: unknown;
  Time?: unknown;
}

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** Size of one entry as EventBridge counts it: Time 14 bytes, then the UTF-8 bytes of the other fields. */
export function entrySize(entry: SizedEntry): number {
  let size = entry.Time !== undefined && entry.Time !== null ? 14 : 0;
  for (const field of [entry.Source, entry.DetailType, entry.Detail])
    if (typeof field === 'string') size += utf8(field);
  if (Array.isArray(entry.Resources)) for (const r of entry.Resources) if (typeof r === 'string') size += utf8(r);
  return size;
}
