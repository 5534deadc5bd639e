/** mergeMap from apimachinery's strategicpatch (server side: parallel lists merged, unmatched nulls ignored). */
import type { SchemaNode } from '../../schema/types.ts';
import { isObject, setKey } from '../json-value.ts';
import type { JsonObject } from '../types.ts';
import {
  deleteFromPrimitiveListPrefix,
  directiveMarker,
  directiveTarget,
  discardNulls,
  removeDirectives,
  retainKeysDirective,
  setElementOrderPrefix,
} from './directives.ts';
import { badArgType, badPatchType, badPrimitiveList, badRetainKeys, badSetElementOrder } from './errors.ts';
import { mergeSliceHandler } from './merge-slice.ts';
import { normalizeElementOrder, partitionByPresence, sliceElementKind } from './order.ts';
import { lookupListField, lookupMapField } from './patch-meta.ts';
import { validatePatchWithSetOrderList } from './set-element-order.ts';

type ValueKind = 'map' | 'slice' | 'scalar';
const kindOf = (v: unknown): ValueKind => (Array.isArray(v) ? 'slice' : isObject(v) ? 'map' : 'scalar');

/** Merge `patch` into `original`; both are owned by the caller and get mutated. */
export function mergeMap(
  original: JsonObject | undefined,
  patch: JsonObject,
  schema: SchemaNode | undefined,
): JsonObject {
  if (Object.hasOwn(patch, directiveMarker)) return handleDirectiveInMergeMap(patch[directiveMarker], patch);
  const target = original ?? {};
  applyRetainKeysDirective(target, patch);
  mergeSetElementOrderLists(target, patch, schema);

  for (const [rawKey, patchV] of Object.entries(patch)) {
    let key = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith(deleteFromPrimitiveListPrefix)) {
      const k = directiveTarget(rawKey, deleteFromPrimitiveListPrefix);
      if (k === undefined) throw badPrimitiveList();
      key = k;
      isDeleteList = true;
    }
    if (patchV === null) {
      delete target[key];
      continue;
    }
    if (!Object.hasOwn(target, key) || kindOf(target[key]) !== kindOf(patchV)) {
      if (!isDeleteList) setCleaned(target, key, patchV);
      continue;
    }
    switch (kindOf(patchV)) {
      case 'map': {
        const { schema: sub, meta } = lookupMapField(schema, key);
        setKey(
          target,
          key,
          meta.strategy === 'replace' ? patchV : mergeMap(target[key] as JsonObject, patchV as JsonObject, sub),
        );
        break;
      }
      case 'slice': {
        const { schema: sub, meta } = lookupListField(schema, key);
        setKey(
          target,
          key,
          mergeSliceHandler(target[key], patchV, sub, meta.strategy, meta.mergeKey, isDeleteList, mergeMap),
        );
        break;
      }
      default:
        setCleaned(target, key, patchV);
    }
  }
  return target;
}

/** A patch value that replaces what is there: its nulls mean nothing and its directives are dropped. */
function setCleaned(target: JsonObject, key: string, value: unknown): void {
  discardNulls(value);
  const r = removeDirectives(value);
  if (r.keep) setKey(target, key, r.value);
  else delete target[key];
}

function handleDirectiveInMergeMap(directive: unknown, patch: JsonObject): JsonObject {
  if (directive === 'replace') {
    delete patch[directiveMarker];
    return patch;
  }
  if (directive === 'delete') return {};
  throw badPatchType(directive, patch);
}

/** `$retainKeys: [...]`: keys of the live map not listed are cleared; the patch may only set listed keys. */
function applyRetainKeysDirective(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, retainKeysDirective)) return;
  const list = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!Array.isArray(list)) throw badRetainKeys();
  const retained = new Set(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(deleteFromPrimitiveListPrefix) || k.startsWith(setElementOrderPrefix)) continue;
    if (!retained.has(k)) throw badRetainKeys();
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k];
}

/** mergePatchIntoOriginal: merge each list that has a `$setElementOrder/<list>` and impose that order. */
function mergeSetElementOrderLists(original: JsonObject, patch: JsonObject, schema: SchemaNode | undefined): void {
  for (const [directiveKey, order] of Object.entries(patch)) {
    if (!directiveKey.startsWith(setElementOrderPrefix)) continue;
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw badArgType('slice', order);
    const key = directiveTarget(directiveKey, setElementOrderPrefix);
    if (key === undefined) throw badSetElementOrder();

    const foundOriginal = Object.hasOwn(original, key);
    const foundPatch = Object.hasOwn(patch, key);
    const originalList = original[key];
    const patchList = patch[key];
    if (foundOriginal && !Array.isArray(originalList)) throw badArgType('slice', originalList);
    if (foundPatch && !Array.isArray(patchList)) throw badArgType('slice', patchList);
    const originalItems = (originalList ?? []) as unknown[];
    const patchItems = (patchList ?? []) as unknown[];

    const { schema: sub, meta } = lookupListField(schema, key);
    validatePatchWithSetOrderList(patchItems, order, meta.mergeKey);

    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalItems;
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchItems).value as unknown[];
    else if (foundOriginal && foundPatch) {
      merged = mergeSliceHandler(originalItems, patchItems, sub, meta.strategy, meta.mergeKey, false, mergeMap);
    } else continue;

    const [named, serverOnly] = partitionByPresence(merged, order, meta.mergeKey);
    const kind = sliceElementKind(originalItems, patchItems);
    original[key] = normalizeElementOrder(named, serverOnly, order, originalItems, meta.mergeKey, kind);
    delete patch[key];
  }
}
