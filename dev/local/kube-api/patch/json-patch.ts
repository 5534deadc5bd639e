/**
 * RFC 6902 JSON patch (`application/json-patch+json`). Errors mirror kube-apiserver: a body that is not a
 * list of operations is 400 BadRequest; an operation that cannot be applied (failed `test`, missing path,
 * unknown op) is 422 Invalid with kube's generic message, which hides the reason (kept in `cause`).
 */

import type { Operation } from 'fast-json-patch';
import jsonpatch from 'fast-json-patch';
import { deepClone, isObject } from './json-value.ts';
import { type JsonObject, PatchError } from './types.ts';

/** kube-apiserver's maxJSONPatchOperations. */
const maxOperations = 10_000;
const rejected = 'the server rejected our request due to an error in our request';

export function applyJsonPatch(target: JsonObject, ops: unknown): JsonObject {
  if (!Array.isArray(ops)) {
    throw new PatchError(`json: cannot unmarshal ${jsonKind(ops)} into Go value of type jsonpatch.Patch`, 400);
  }
  ops.forEach((op) => {
    if (!isObject(op)) {
      throw new PatchError(`json: cannot unmarshal ${jsonKind(op)} into Go value of type jsonpatch.Operation`, 400);
    }
  });
  if (ops.length > maxOperations) {
    throw new PatchError(`The allowed maximum operations in a JSON patch is ${maxOperations}, got ${ops.length}`, 422);
  }
  try {
    const result = jsonpatch.applyPatch(deepClone(target), ops as Operation[], true, true).newDocument;
    if (!isObject(result)) throw new Error('the patched document is not an object');
    return result;
  } catch (err) {
    const failure = new PatchError(rejected, 422);
    // fast-json-patch's message embeds the whole document (possibly a Secret): keep its first line only.
    failure.cause = new Error(String(err instanceof Error ? err.message : err).split('\n')[0]);
    throw failure;
  }
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'object';
  return typeof value;
}
