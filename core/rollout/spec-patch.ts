/**
 * The rollout's change as a JSON merge patch on the PoolSpirit spec, and the three questions a rollout
 * asks of it: does a live spec carry it, what did the patched fields hold before (the rollback snapshot),
 * and what object do we server-side apply.
 *
 * Why no `null` (RFC 7396's "remove this field"): the change is written with server-side apply, and an
 * applier can only drop fields it owns itself; a field set by the operator would silently survive. A
 * patch that needs a removal is refused up front instead of half-applied.
 */
import { RolloutSpecError } from './limits.ts';

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (v: Json): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export function validatePatch(patch: Json, field = 'patch'): JsonObject {
  if (!isObject(patch))
    throw new RolloutSpecError(field, 'expected a JSON object (a merge patch on the PoolSpirit spec)');
  if (Object.keys(patch).length === 0) throw new RolloutSpecError(field, 'expected at least one field to change');
  const walk = (value: Json, path: string): void => {
    if (value === null)
      throw new RolloutSpecError(
        `${field}.${path}`,
        'null (field removal) is not supported: set an explicit value instead',
      );
    if (isObject(value)) {
      if (path && Object.keys(value).length === 0)
        throw new RolloutSpecError(`${field}.${path}`, 'an empty object changes nothing');
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    }
  };
  walk(patch, '');
  if ('nodePool' in patch)
    throw new RolloutSpecError(`${field}.nodePool`, 'a rollout cannot move a PoolSpirit to another NodePool');
  return patch;
}

/** Key-order-independent JSON text, for equality. */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function jsonEqual(a: Json, b: Json): boolean {
  return canonical(a) === canonical(b);
}

/** Every field the patch sets holds the patch's value in `spec` (arrays compare whole, as merge patch replaces them). */
export function specMatchesPatch(spec: Json, patch: JsonObject): boolean {
  const s = isObject(spec) ? spec : {};
  return Object.entries(patch).every(([k, v]) => (isObject(v) ? specMatchesPatch(s[k], v) : jsonEqual(s[k], v)));
}

/**
 * The values `spec` holds at the fields the patch sets, in the patch's shape (absent fields stay absent):
 * the snapshot a rollback restores, and the object it applies.
 */
export function projectOnto(spec: Json, patch: JsonObject): JsonObject {
  const s = isObject(spec) ? spec : {};
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(patch)) {
    if (!(k in s) || s[k] === undefined) continue;
    if (isObject(v) && isObject(s[k])) {
      const inner = projectOnto(s[k], v);
      if (Object.keys(inner).length) out[k] = inner;
    } else {
      out[k] = s[k];
    }
  }
  return out;
}

/** `spec` with the patch merged in (RFC 7396 without removals). */
export function mergePatch(spec: Json, patch: JsonObject): JsonObject {
  const out: JsonObject = isObject(spec) ? { ...spec } : {};
  for (const [k, v] of Object.entries(patch)) out[k] = isObject(v) ? mergePatch(out[k], v) : v;
  return out;
}

/**
 * The live spec is back where the snapshot says it was: every patched field equals its snapshot value,
 * and fields the snapshot lacks are absent again (or no longer hold the rollout's value, when another
 * manager still owns them).
 */
export function specMatchesSnapshot(spec: Json, patch: JsonObject, snapshot: JsonObject): boolean {
  const s = isObject(spec) ? spec : {};
  return Object.entries(patch).every(([k, v]) => {
    if (isObject(v))
      return isObject(snapshot[k]) || !(k in snapshot)
        ? specMatchesSnapshot(s[k], v, isObject(snapshot[k]) ? snapshot[k] : {})
        : jsonEqual(s[k], snapshot[k]);
    return k in snapshot ? jsonEqual(s[k], snapshot[k]) : !jsonEqual(s[k], v);
  });
}
