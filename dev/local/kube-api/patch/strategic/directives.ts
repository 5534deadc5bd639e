/** Strategic merge patch directive keys and the clean-up of patch values that land in the object as is. */
import { isObject, setKey } from '../json-value.ts';

export const directiveMarker = '$patch';
export const retainKeysDirective = '$retainKeys';
export const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList';
export const setElementOrderPrefix = '$setElementOrder';

/** removeDirectives: drop maps carrying `$patch` (and list items that are such maps). Mutates `value`. */
export function removeDirectives(value: unknown): { value: unknown; keep: boolean } {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) {
      const r = removeDirectives(v);
      if (r.keep) out.push(r.value);
    }
    return { value: out, keep: true };
  }
  if (isObject(value)) {
    if (Object.hasOwn(value, directiveMarker)) return { value: undefined, keep: false };
    for (const [k, v] of Object.entries(value)) {
      const r = removeDirectives(v);
      if (r.keep) setKey(value, k, r.value);
      else delete value[k];
    }
  }
  return { value, keep: true };
}

/**
 * discardNullValuesFromPatch: a null in a value that is new to the object means nothing. Also drops
 * parallel-list and retainKeys directive keys left inside such a value, which kube's conversion to the
 * Go type would drop as unknown fields. Mutates.
 */
export function discardNulls(value: unknown): void {
  if (Array.isArray(value)) value.forEach(discardNulls);
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v === null || isParallelDirective(k)) delete value[k];
      else discardNulls(v);
    }
  }
}

const isParallelDirective = (key: string) =>
  key === retainKeysDirective ||
  key.startsWith(`${setElementOrderPrefix}/`) ||
  key.startsWith(`${deleteFromPrimitiveListPrefix}/`);

/** `$setElementOrder/containers` → `containers`; a key without the `/` is malformed. */
export function directiveTarget(key: string, prefix: string): string | undefined {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) return undefined;
  return key.slice(slash + 1);
}
