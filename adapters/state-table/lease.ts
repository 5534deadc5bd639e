/**
 * Leases with fencing tokens on single-item conditional writes (no transactions; dynalite has none).
 *
 * A lease is three attributes on any item: the holder, the time it lapses (epoch ms, checked by us —
 * DynamoDB TTL is lazy and dynalite has none) and a fencing token incremented on every acquisition. The
 * token is never reset (release keeps the item), so a holder that stalled past its lease and comes back
 * finds a larger token and every fenced write it attempts is rejected.
 *
 * The reconcile keeps its lease on the pool's state item, so acquiring the lease and recording the
 * outcome (which releases it) are the only two writes a reconcile makes — see reconcile-state.ts.
 */

import type { UpdateParts } from './expression.ts';
import { emptyParts, mergeParts, renderUpdate } from './expression.ts';
import type { ItemKey } from './keys.ts';
import { TTL_ATTRIBUTE, ttlAfter } from './keys.ts';
import type { Item, StateTable } from './table.ts';
import { getItem, isConditionFailed, updateItem } from './table.ts';

export const LEASE_OWNER = 'leaseOwner';
export const LEASE_UNTIL = 'leaseUntil';
export const FENCING_TOKEN = 'fencingToken';

export interface Lease {
  key: ItemKey;
  owner: string;
  /** Fencing token: strictly larger than any earlier holder's. */
  token: number;
  /** Epoch ms after which others may take the lease. */
  until: number;
}

export type AcquireResult =
  | { acquired: true; lease: Lease; item: Item }
  | { acquired: false; heldBy: string; heldUntil: number; item: Item }
  | { acquired: false; heldBy?: undefined; heldUntil?: undefined; item?: Item };

export class LeaseLostError extends Error {
  constructor(key: ItemKey, owner: string) {
    super(`lease on ${key.pk}/${key.sk} is no longer held by ${owner}`);
    this.name = 'LeaseLostError';
  }
}

export interface AcquireOptions {
  /** Also set the item's TTL (standalone lease items): the item may vanish this long after the lease lapses. */
  keepItemForMs?: number;
  /** Further conditions and updates folded into the same write (e.g. event dedupe). */
  extra?: UpdateParts;
}

function leaseNames(): Record<string, string> {
  return { '#leaseOwner': LEASE_OWNER, '#leaseUntil': LEASE_UNTIL, '#fencingToken': FENCING_TOKEN };
}

/** Condition + update that take the lease when it is free or lapsed. */
export function acquireParts(owner: string, now: number, ttlMs: number): UpdateParts {
  const p = emptyParts();
  Object.assign(p.names, leaseNames());
  p.values[':leaseOwner'] = owner;
  p.values[':leaseUntil'] = now + ttlMs;
  p.values[':now'] = now;
  p.values[':one'] = 1;
  p.set.push('#leaseOwner = :leaseOwner', '#leaseUntil = :leaseUntil');
  p.add.push('#fencingToken :one');
  p.conditions.push('attribute_not_exists(#leaseOwner) OR #leaseUntil <= :now');
  return p;
}

/** Condition that only the current holder with this exact token passes. */
export function holderParts(lease: Lease): UpdateParts {
  const p = emptyParts();
  Object.assign(p.names, leaseNames());
  p.values[':heldBy'] = lease.owner;
  p.values[':heldToken'] = lease.token;
  p.conditions.push('#leaseOwner = :heldBy AND #fencingToken = :heldToken');
  return p;
}

/** Update that clears the holder (the token stays: it must only ever grow). */
export function releaseParts(): UpdateParts {
  const p = emptyParts();
  Object.assign(p.names, leaseNames());
  p.remove.push('#leaseOwner', '#leaseUntil');
  return p;
}

export async function acquireLease(
  table: StateTable,
  key: ItemKey,
  owner: string,
  ttlMs: number,
  now: Date,
  options: AcquireOptions = {},
): Promise<AcquireResult> {
  if (!owner) throw new TypeError('lease owner: expected a non-empty string');
  if (!(ttlMs > 0)) throw new TypeError(`lease ttlMs: expected a positive number, got ${ttlMs}`);
  const nowMs = now.getTime();
  const parts = mergeParts(acquireParts(owner, nowMs, ttlMs), options.extra ?? emptyParts());
  if (options.keepItemForMs !== undefined) {
    parts.names['#ttl'] = TTL_ATTRIBUTE;
    parts.values[':ttl'] = ttlAfter(now, ttlMs + options.keepItemForMs);
    parts.set.push('#ttl = :ttl');
  }
  try {
    const out = await updateItem(table, { Key: key, ...renderUpdate(parts), ReturnValues: 'ALL_NEW' });
    const item = out.Attributes ?? {};
    return {
      acquired: true,
      item,
      lease: { key, owner, token: Number(item[FENCING_TOKEN]), until: nowMs + ttlMs },
    };
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    // Tell the caller who holds it (a read, not a write): dynalite does not return the item on failure.
    const item = await getItem(table, key);
    const heldUntil = typeof item?.[LEASE_UNTIL] === 'number' ? (item[LEASE_UNTIL] as number) : undefined;
    const holder = item?.[LEASE_OWNER];
    const held = item !== undefined && holder !== undefined && heldUntil !== undefined && heldUntil > nowMs;
    return held ? { acquired: false, heldBy: String(holder), heldUntil, item } : { acquired: false, item };
  }
}

export async function renewLease(table: StateTable, lease: Lease, ttlMs: number, now: Date): Promise<Lease> {
  const until = now.getTime() + ttlMs;
  const parts = holderParts(lease);
  parts.values[':leaseUntil'] = until;
  parts.set.push('#leaseUntil = :leaseUntil');
  try {
    await updateItem(table, { Key: lease.key, ...renderUpdate(parts) });
  } catch (err) {
    if (isConditionFailed(err)) throw new LeaseLostError(lease.key, lease.owner);
    throw err;
  }
  return { ...lease, until };
}

/** Releases the lease; rejected (LeaseLostError) unless the caller still holds it with the same token. */
export async function releaseLease(table: StateTable, lease: Lease): Promise<void> {
  try {
    await updateItem(table, { Key: lease.key, ...renderUpdate(mergeParts(holderParts(lease), releaseParts())) });
  } catch (err) {
    if (isConditionFailed(err)) throw new LeaseLostError(lease.key, lease.owner);
    throw err;
  }
}
