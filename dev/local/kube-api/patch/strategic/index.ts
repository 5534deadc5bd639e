/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) as kube-apiserver applies it to
 * built-in kinds: lists with `x-kubernetes-patch-strategy: merge` merge by their merge key (or as sets of
 * primitives), other lists are replaced, maps merge, `null` deletes, and the directives `$patch`,
 * `$retainKeys`, `$deleteFromPrimitiveList/<list>` and `$setElementOrder/<list>` apply.
 */
import type { SchemaNode } from '../../schema/types.ts';
import { deepClone, isObject } from '../json-value.ts';
import { type JsonObject, PatchError } from '../types.ts';
import { mergeMap } from './merge-map.ts';

export function applyStrategicMergePatch(
  target: JsonObject,
  patch: unknown,
  schema: SchemaNode | undefined,
): JsonObject {
  // Go decodes a `null` body into an empty map; anything else that is not an object fails to decode.
  if (patch === null || patch === undefined) return deepClone(target);
  if (!isObject(patch)) {
    const kind = Array.isArray(patch) ? 'array' : typeof patch;
    throw new PatchError(`json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`, 400);
  }
  return mergeMap(deepClone(target), deepClone(patch), schema);
}
