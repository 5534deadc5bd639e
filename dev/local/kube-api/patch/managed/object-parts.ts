/** Reading and writing the parts of an object the field manager cares about. */

import type { FieldSet } from '../fieldpath/field-set.ts';
import { deepClone, isObject } from '../json-value.ts';
import type { JsonObject, ManagedFieldsEntry } from '../types.ts';

export function managedFieldsOf(obj: JsonObject | undefined): unknown {
  return isObject(obj?.metadata) ? obj.metadata.managedFields : undefined;
}

/**
 * The object without metadata.managedFields (RemoveObjectManagedFields): its top level and metadata are
 * copies, everything below them is shared with `obj`. Callers read it, or set top-level fields (status);
 * nothing writes deeper. A deep copy for every write was the largest allocation of the managed-fields pass.
 */
export function withoutManagedFields(obj: JsonObject): JsonObject {
  const out = { ...obj };
  if (isObject(obj.metadata)) {
    const { managedFields: _dropped, ...metadata } = obj.metadata;
    out.metadata = metadata;
  }
  return out;
}

export function setManagedFields(obj: JsonObject, entries: ManagedFieldsEntry[]): void {
  if (!isObject(obj.metadata)) {
    if (entries.length === 0) return;
    obj.metadata = {};
  }
  const meta = obj.metadata as JsonObject;
  if (entries.length > 0) meta.managedFields = entries;
  else delete meta.managedFields;
}

/** Put back the live value (or absence) of every top-level path in `reset`; they are not this endpoint's. */
export function restoreResetFields(result: JsonObject, live: JsonObject, reset: FieldSet): void {
  for (const path of reset.paths()) {
    let src: unknown = live;
    let dst: unknown = result;
    for (let i = 0; i < path.length; i++) {
      const pe = path[i];
      if (pe === undefined || !('field' in pe) || !isObject(dst)) break;
      const srcNext = isObject(src) ? src[pe.field] : undefined;
      if (i === path.length - 1) {
        if (srcNext === undefined) delete dst[pe.field];
        else dst[pe.field] = deepClone(srcNext);
      } else {
        if (!isObject(dst[pe.field])) {
          if (srcNext === undefined) break;
          dst[pe.field] = {};
        }
        dst = dst[pe.field];
        src = srcNext;
      }
    }
  }
}

/** kube's objectGVKNN, e.g. `default/web; apps/v1, Kind=Deployment`. */
export function objectGvkNN(obj: JsonObject): string {
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return `${String(meta.namespace ?? '')}/${String(meta.name ?? '')}; ${group}/${version}, Kind=${String(obj.kind ?? '')}`;
}
