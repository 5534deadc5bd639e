import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so equal values always serialise to equal text.
 *
 * Objects whose keys are already in order are written as they are; only the others are copied with their
 * keys sorted. Every reconcile hashes all of a pool's rendered objects, and a sorted copy of every object
 * was a tenth of the reconcile function's allocation. The text is the same as that of a copy of the whole
 * value (test/core/hash.test.ts compares the two), so stored hashes stay valid: JSON.stringify writes an
 * object's array-index keys first in numeric order and then the others in the order they were added, so
 * an object is in order when those others are; an object that is not plain (a Date) or has an own
 * `__proto__` key is always copied, as before.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value));
}

function sorted(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = sorted(value[i]);
      if (item !== value[i]) {
        out ??= value.slice();
        out[i] = item;
      }
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const proto = Object.getPrototypeOf(record);
  let copy = (proto !== Object.prototype && proto !== null) || !inOrder(keys);
  const children: unknown[] = new Array(keys.length);
  keys.forEach((key, i) => {
    const child = record[key];
    children[i] = child === undefined ? undefined : sorted(child);
    if (children[i] !== child) copy = true;
  });
  if (!copy) return value;
  const order = keys.map((key, i) => ({ key, child: children[i] }));
  order.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const out: Record<string, unknown> = {};
  // Assignment, as the copy always made it: a `__proto__` key sets the copy's prototype and is not written.
  for (const { key, child } of order) if (child !== undefined) out[key] = child;
  return out;
}

/** Whether the keys after the array indices (which Object.keys lists first) are in code-unit order. */
function inOrder(keys: string[]): boolean {
  let previous: string | undefined;
  for (const key of keys) {
    if (key === '__proto__') return false;
    if (isArrayIndex(key)) continue;
    if (previous !== undefined && previous >= key) return false;
    previous = key;
  }
  return true;
}

/** An array index as V8 orders object keys: a canonical decimal integer below 2^32 − 1. */
function isArrayIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  if (key.length === 0 || key.length > 10 || c < 48 || c > 57) return false;
  const n = Number(key);
  return Number.isInteger(n) && n < 4294967295 && String(n) === key;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A hash of a JSON value that does not depend on key order: used for pod-template annotations (a change
 * rolls the pod), the desired-state hash recorded per reconcile and the bootstrap content hash.
 */
export function stableHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
