/** RFC 7386 JSON merge patch (`application/merge-patch+json`), as evanphx/json-patch applies it for kube. */
import { deepClone, isObject, setKey } from './json-value.ts';
import { type JsonObject, PatchError } from './types.ts';

export function applyMergePatch(target: JsonObject, patch: unknown): JsonObject {
  // Go decodes a `null` body into an empty patch: nothing changes.
  if (patch === null || patch === undefined) return deepClone(target);
  if (!isObject(patch)) throw new PatchError('Invalid JSON Patch', 400);
  return mergeObject(target, patch);
}

function mergeObject(target: unknown, patch: JsonObject): JsonObject {
  const out: JsonObject = {};
  if (isObject(target)) for (const [k, v] of Object.entries(target)) setKey(out, k, v);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isObject(value)) setKey(out, key, mergeObject(Object.hasOwn(out, key) ? out[key] : undefined, value));
    else setKey(out, key, deepClone(value));
  }
  return out;
}
