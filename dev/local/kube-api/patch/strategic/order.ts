/**
 * Element order after a strategic merge, as apimachinery computes it: items named by the patch (or its
 * $setElementOrder list) keep the patch's order, server-only items keep the live order, and the two
 * sequences are interleaved using the live order as the tie-breaker.
 */
import { goSprint, goTypeName, isObject } from '../json-value.ts';
import { badArgType, internal, noListOfLists, noMergeKey } from './errors.ts';

export type ElementKind = 'map' | 'scalar';

/** sliceElementType: the common element kind of the slices; lists of lists and mixed types are errors. */
export function sliceElementKind(...slices: unknown[][]): ElementKind {
  let first: string | undefined;
  for (const s of slices) {
    for (const v of s) {
      const t = goTypeName(v);
      if (first === undefined) {
        if (Array.isArray(v)) throw noListOfLists();
        first = t;
      } else if (t !== first) {
        throw internal(`list element types are not identical: [${slices.map(goSprint).join(' ')}]`);
      }
    }
  }
  if (first === undefined) throw internal('no elements in any of the given slices');
  return first === 'map[string]interface {}' ? 'map' : 'scalar';
}

function identity(item: unknown, mergeKey: string, kind: ElementKind): unknown {
  if (kind !== 'map') return item;
  return isObject(item) ? item[mergeKey] : undefined;
}

function indexIn(list: unknown[], item: unknown, mergeKey: string, kind: ElementKind): number {
  const want = identity(item, mergeKey, kind);
  return list.findIndex((v) => identity(v, mergeKey, kind) === want);
}

function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isObject(item)) throw badArgType('map', item);
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    }
  }
}

/** normalizeSliceOrder: stable sort of `toSort` by position in `order`; `$patch: delete` items go last. */
function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  let keep = toSort;
  let toDelete: unknown[] = [];
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, toSort, order);
    keep = toSort.filter((v) => (v as Record<string, unknown>).$patch !== 'delete');
    toDelete = toSort.filter((v) => (v as Record<string, unknown>).$patch === 'delete');
  }
  const ranked = keep.map((item, i) => ({ item, i, rank: indexIn(order, item, mergeKey, kind) }));
  ranked.sort((a, b) => (a.rank >= 0 && b.rank >= 0 ? a.rank - b.rank : a.i - b.i));
  return [...ranked.map((r) => r.item), ...toDelete];
}

/** mergeSortedSlice: interleave server-only items (left) into patch items (right) by the live order. */
function mergeSortedSlice(
  left: unknown[],
  right: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: ElementKind,
) {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    const li = indexIn(serverOrder, left[i], mergeKey, kind);
    const ri = indexIn(serverOrder, right[j], mergeKey, kind);
    if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
    else out.push(right[j++]);
  }
  return [...out, ...left.slice(i), ...right.slice(j)];
}

export function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: ElementKind,
): unknown[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(s, p, serverOrder, mergeKey, kind);
}

/** Split `items` into those named in `by` (by value, or by merge key for maps) and the rest. */
export function partitionByPresence(items: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  if (!mergeKey) {
    const present = new Set(by);
    for (const v of items) (present.has(v) ? inPatch : serverOnly).push(v);
    return [inPatch, serverOnly];
  }
  for (const v of items) {
    if (!isObject(v)) throw badArgType('map', v);
    if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
    const found = findByKey(by, mergeKey, v[mergeKey]) >= 0;
    (found ? inPatch : serverOnly).push(v);
  }
  return [inPatch, serverOnly];
}

/** findMapInSliceBasedOnKeyValue: index of the first map whose `key` equals `value`, or -1. */
export function findByKey(list: unknown[], key: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isObject(item)) throw internal(`value for key ${i} is not a map`);
    if (Object.hasOwn(item, key) && item[key] === value) return i;
  }
  return -1;
}
