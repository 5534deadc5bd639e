/**
 * Sends PutEvents entries in calls of at most 10 (the PutEvents limit) and re-sends the entries a call
 * reports as failed (throttling, internal errors), a few times with backoff. What still fails makes the
 * whole send throw: the bus then retries the invocation, and since receivers are level-triggered a
 * repeated request repeats work that changes nothing (a no-op reconcile, one more probe observation).
 * Shared by every function that sends follow-up events (audit, cloud-events, probe).
 */
import type { PutEventsRequestEntry, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import type { PutEventsEntry } from '../../events/index.ts';
import { MAX_ENTRIES_PER_CALL } from '../../events/put-events-limits.ts';

export interface EventSender {
  putEvents(entries: PutEventsRequestEntry[]): Promise<PutEventsResultEntry[]>;
}

export interface SendStats {
  calls: number;
  sent: number;
  resent: number;
}

export async function sendEntries(
  sender: EventSender,
  entries: PutEventsEntry[],
  attempts = 4,
  baseDelayMs = 100,
): Promise<SendStats> {
  const stats: SendStats = { calls: 0, sent: 0, resent: 0 };
  let pending = entries;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const failed: PutEventsEntry[] = [];
    let lastError = '';
    for (let i = 0; i < pending.length; i += MAX_ENTRIES_PER_CALL) {
      const batch = pending.slice(i, i + MAX_ENTRIES_PER_CALL);
      stats.calls++;
      const results = await sender.putEvents(batch);
      batch.forEach((entry, j) => {
        const result = results[j];
        if (result?.ErrorCode) {
          failed.push(entry);
          lastError = `${result.ErrorCode}: ${result.ErrorMessage ?? ''}`;
        } else {
          stats.sent++;
        }
      });
    }
    if (failed.length === 0) break;
    if (attempt >= attempts)
      throw new Error(
        `${failed.length} of ${entries.length} event(s) could not be sent after ${attempts} attempts (last: ${lastError})`,
      );
    stats.resent += failed.length;
    pending = failed;
    await new Promise((r) => setTimeout(r, baseDelayMs * 2 ** (attempt - 1)));
  }
  return stats;
}
