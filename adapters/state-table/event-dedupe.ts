/**
 * Event dedupe records for functions that have no per-key item to fold dedupe into (the reconcile keeps
 * its dedupe on the pool's lease item, see reconcile-state.ts). One conditional put per event: the first
 * claim of an id wins, a repeat within the window is refused. Expiry is checked in the condition, since
 * DynamoDB TTL deletes late and dynalite never does.
 */
import { keys, TTL_ATTRIBUTE, ttlAfter } from './keys.ts';
import type { StateTable } from './table.ts';
import { deleteItem, isConditionFailed, putItem } from './table.ts';

export const DEFAULT_DEDUPE_WINDOW_MS = 24 * 3600 * 1000;

/** True when this call claimed the event id; false when it was already claimed within the window. */
export async function claimEvent(
  table: StateTable,
  eventId: string,
  now: Date,
  windowMs = DEFAULT_DEDUPE_WINDOW_MS,
  detail: Record<string, string | number> = {},
): Promise<boolean> {
  try {
    await putItem(table, {
      Item: {
        ...keys.event(eventId),
        ...detail,
        claimedAt: now.toISOString(),
        [TTL_ATTRIBUTE]: ttlAfter(now, windowMs),
      },
      ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :nowSeconds',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':nowSeconds': Math.floor(now.getTime() / 1000) },
    });
    return true;
  } catch (err) {
    if (isConditionFailed(err)) return false;
    throw err;
  }
}

/** Forgets a claim so a retry of the event runs again (call when the work failed). */
export async function forgetEvent(table: StateTable, eventId: string): Promise<void> {
  await deleteItem(table, { Key: keys.event(eventId) });
}
