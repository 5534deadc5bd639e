import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal values always serialise to equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
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
