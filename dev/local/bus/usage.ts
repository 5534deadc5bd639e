/**
 * What the local bus would bill and count against quotas on EventBridge and SQS: PutEvents entries and
 * their 64 KB billing chunks (per source and detail-type), rule matches per target (each one an
 * invocation against the account's invocations quota), schedule firings, and dead-letter messages sent to
 * SQS (by EventBridge after retries, or by a function itself). Counting only: nothing here changes routing.
 */
import { entrySize, type SizedEntry } from '../../../events/put-events-limits.ts';

/** EventBridge bills a PutEvents entry per started 64 KB. */
export const PUT_EVENTS_BILLING_CHUNK_BYTES = 64 * 1024;

export interface BusUsage {
  putEventsCalls: number;
  /** Accepted entries. */
  entries: number;
  /** Billed events: each accepted entry counts once per started 64 KB. */
  billedEvents: number;
  entryBytes: number;
  /** `<source> / <detail-type>` → accepted entries. */
  entriesByType: Record<string, number>;
  /** Rule target → events that matched one of its rules (first deliveries, retries not counted). */
  matchesByTarget: Record<string, number>;
  scheduledByTarget: Record<string, number>;
  /** Messages that reached a dead-letter queue (SQS SendMessage). */
  sqsMessages: number;
}

export class BusUsageMeter {
  private usage: BusUsage = {
    putEventsCalls: 0,
    entries: 0,
    billedEvents: 0,
    entryBytes: 0,
    entriesByType: {},
    matchesByTarget: {},
    scheduledByTarget: {},
    sqsMessages: 0,
  };

  snapshot(): BusUsage {
    return structuredClone(this.usage);
  }

  putEventsCall(): void {
    this.usage.putEventsCalls += 1;
  }

  accepted(entry: SizedEntry & { Source?: unknown; DetailType?: unknown }): void {
    const bytes = entrySize(entry);
    this.usage.entries += 1;
    this.usage.entryBytes += bytes;
    this.usage.billedEvents += Math.max(1, Math.ceil(bytes / PUT_EVENTS_BILLING_CHUNK_BYTES));
    const type = `${String(entry.Source)} / ${String(entry.DetailType)}`;
    this.usage.entriesByType[type] = (this.usage.entriesByType[type] ?? 0) + 1;
  }

  matched(targets: string[]): void {
    for (const t of targets) this.usage.matchesByTarget[t] = (this.usage.matchesByTarget[t] ?? 0) + 1;
  }

  scheduled(target: string): void {
    this.usage.scheduledByTarget[target] = (this.usage.scheduledByTarget[target] ?? 0) + 1;
  }

  sqsMessage(): void {
    this.usage.sqsMessages += 1;
  }
}
