/** validatePatchWithSetOrderList: the patch list must be a subsequence of its `$setElementOrder` list. */
import { goSprint, isObject } from '../json-value.ts';
import { directiveMarker, setElementOrderPrefix } from './directives.ts';
import { badArgType, internal, noMergeKey } from './errors.ts';

export function validatePatchWithSetOrderList(patchList: unknown[], setOrderList: unknown[], mergeKey: string): void {
  if (setOrderList.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey ? patchList.filter((v) => !isDeleteItem(v)) : patchList;
  let p = 0;
  let s = 0;
  while (p < nonDelete.length && s < setOrderList.length) {
    if (isObject(nonDelete[p]) && Object.hasOwn(nonDelete[p] as object, directiveMarker)) {
      p++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[p], setOrderList[s], mergeKey)) p++;
    s++;
  }
  if (p < nonDelete.length && s >= setOrderList.length) {
    throw internal(
      `the order in patch list:\n${goSprint(patchList)}\n doesn't match ${setElementOrderPrefix} list:\n${goSprint(setOrderList)}`,
    );
  }
}

function isDeleteItem(v: unknown): boolean {
  if (!isObject(v)) throw badArgType('map', v);
  return v[directiveMarker] === 'delete';
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (!mergeKey) return left === right;
  if (!isObject(left)) throw badArgType('map', left);
  if (!isObject(right)) throw badArgType('map', right);
  if (!Object.hasOwn(left, mergeKey)) throw noMergeKey(left, mergeKey);
  if (!Object.hasOwn(right, mergeKey)) throw noMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}
