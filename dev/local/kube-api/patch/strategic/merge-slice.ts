/** mergeSlice from apimachinery's strategicpatch: merge lists by merge key, or as sets of primitives. */
import type { SchemaNode } from '../../schema/types.ts';
import { isObject } from '../json-value.ts';
import type { JsonObject } from '../types.ts';
import { directiveMarker, discardNulls, removeDirectives } from './directives.ts';
import { badArgType, badPatchType, internal, noMergeKey } from './errors.ts';
import { findByKey, normalizeElementOrder, partitionByPresence, sliceElementKind } from './order.ts';

/**
 * mergeMap (merge-map.ts), which merges list items sharing a merge key; passed in by mergeMap itself, as the
 * two recurse into each other and merge-map.ts imports this module.
 */
export type MergeMap = (
  original: JsonObject | undefined,
  patch: JsonObject,
  schema: SchemaNode | undefined,
) => JsonObject;

export function mergeSliceHandler(
  original: unknown,
  patch: unknown,
  itemSchema: SchemaNode | undefined,
  strategy: string,
  mergeKey: string,
  isDeleteList: boolean,
  mergeMap: MergeMap,
): unknown[] {
  if (!Array.isArray(original)) throw badArgType('slice', original);
  if (!Array.isArray(patch)) throw badArgType('slice', patch);
  // Delete lists are handled the same way whatever the field's strategy is.
  if (strategy === 'merge' || isDeleteList)
    return mergeSlice(original, patch, itemSchema, mergeKey, isDeleteList, mergeMap);
  return patch;
}

function mergeSlice(
  original: unknown[],
  patch: unknown[],
  itemSchema: SchemaNode | undefined,
  mergeKey: string,
  isDeleteList: boolean,
  mergeMap: MergeMap,
): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  let merged: unknown[];
  let live = original;
  let items = patch;
  if (kind !== 'map') {
    if (isDeleteList) {
      const doomed = new Set(patch);
      return original.filter((v) => !doomed.has(v));
    }
    merged = [...new Set([...original, ...patch])];
  } else {
    if (!mergeKey) throw internal('cannot merge lists without merge key for struct');
    [live, items] = applySpecialElements(original, patch, mergeKey);
    merged = mergeByKey(live, items, mergeKey, itemSchema, mergeMap);
  }
  const [named, serverOnly] = partitionByPresence(merged, items, mergeKey);
  return normalizeElementOrder(named, serverOnly, items, live, mergeKey, kind);
}

/** mergeSliceWithSpecialElements: `$patch: delete` items remove live items; `$patch: replace` replaces. */
function applySpecialElements(original: unknown[], patch: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const plain: unknown[] = [];
  let live = original;
  let replace = false;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, directiveMarker)) {
      plain.push(v);
      continue;
    }
    switch (item[directiveMarker]) {
      case 'delete':
        if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
        live = live.filter((e) => !(isObject(e) && Object.hasOwn(e, mergeKey) && e[mergeKey] === item[mergeKey]));
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw internal('merging lists cannot yet be specified in the patch');
      default:
        throw badPatchType(item[directiveMarker], item);
    }
  }
  return replace ? [plain, []] : [live, plain];
}

/** mergeSliceWithoutSpecialElements: merge items sharing a merge key value, append the others. */
function mergeByKey(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
  itemSchema: SchemaNode | undefined,
  mergeMap: MergeMap,
) {
  const out = [...original];
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const at = findByKey(out, mergeKey, item[mergeKey]);
    if (at >= 0) out[at] = mergeMap(out[at] as JsonObject, item, itemSchema);
    else {
      // Appended as sent; a Go struct round trip would drop its nulls, so drop them here.
      discardNulls(item);
      removeDirectives(item);
      out.push(item);
    }
  }
  return out;
}
