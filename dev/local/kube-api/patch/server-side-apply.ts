/**
 * Server-side apply (`application/apply-patch+yaml`) with metadata.managedFields, following
 * structured-merge-diff's Updater.Apply wrapped in kube-apiserver's field manager layers: the applier owns
 * exactly the fields of its configuration; a field another manager owns is a conflict when this apply
 * changes its value (unless forced, which takes it over); fields the applier set last time and nobody
 * owns now are removed; `metadata.name`-like fields are never tracked.
 */
import type { SchemaNode } from '../schema/types.ts';
import { FieldSet } from './fieldpath/field-set.ts';
import { deepEqual, isObject } from './json-value.ts';
import { applyConflictError } from './managed/conflicts.ts';
import type { ManagerRecord, Managers } from './managed/entries.ts';
import {
  decodeManagedFields,
  encodeManagedFields,
  keepTimestampsIfUnchanged,
  kubeTime,
  managerId,
} from './managed/entries.ts';
import { allowedConflictsFromLastApplied, syncLastApplied } from './managed/last-applied.ts';
import {
  managedFieldsOf,
  objectGvkNN,
  restoreResetFields,
  setManagedFields,
  withoutManagedFields,
} from './managed/object-parts.ts';
import { resetFieldSet, stripMeta } from './managed/strip.ts';
import { updateComparison, writerFields } from './managed/updater-changes.ts';
import { compare, excludeFields } from './typed/compare.ts';
import { mergeApplied } from './typed/merge.ts';
import { rootSchema } from './typed/object-meta.ts';
import { prune } from './typed/prune.ts';
import { toFieldSet } from './typed/to-field-set.ts';
import { type JsonObject, PatchError, PatchInternalError, type ServerSideApplyOptions } from './types.ts';

/** Manager kube credits with an object's fields the first time it is applied without managedFields. */
export const beforeFirstApplyManager = 'before-first-apply';

export function serverSideApply(input: ServerSideApplyOptions): JsonObject {
  const { live, applied, manager, force, subresource } = input;
  if (!isObject(applied)) throw new PatchError('the applied configuration must be an object', 400);
  if (isObject(applied.metadata) && Array.isArray(applied.metadata.managedFields)) {
    throw new PatchError('metadata.managedFields must be nil', 400);
  }
  const schema = rootSchema(input.schema);
  const now = kubeTime(input.now);
  const liveObj = live ? withoutManagedFields(live) : {};
  const apiVersion = String(applied.apiVersion ?? live?.apiVersion ?? '');
  const ignored = resetFieldSet(input.resetFields, subresource, liveObj, applied);
  const managers = decodeLive(live);

  if (live && managers.size === 0)
    creditExistingFields(managers, liveObj, schema, apiVersion, subresource, now, ignored);

  const errors: string[] = [];
  const appliedSet = toFieldSet(applied, schema, errors).recursiveDifference(ignored);
  if (errors.length > 0) {
    const detail = errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
    throw new PatchInternalError(`failed to create typed patch object (${objectGvkNN(applied)}): ${detail}`);
  }

  const selfId = managerId({ manager, operation: 'Apply', apiVersion, subresource });
  const lastSet = managers.get(selfId)?.set;
  const self: ManagerRecord = { manager, operation: 'Apply', apiVersion, subresource, time: now, set: appliedSet };
  managers.set(selfId, self);

  let merged = mergeApplied(liveObj, applied, schema) as JsonObject;
  if (lastSet && !lastSet.isEmpty()) {
    const owned = [...managers.values()].reduce((acc, r) => acc.union(r.set), new FieldSet());
    merged = prune(merged, lastSet, owned, schema);
  }

  settleOwnership(managers, selfId, liveObj, merged, schema, ignored, force, manager === 'kubectl');
  self.set = stripMeta(self.set);

  const result = endpointResult(liveObj, merged, ignored, subresource, input.resetFields !== undefined);
  if (manager === 'kubectl') syncLastApplied(result, applied);
  const entries = encodeManagedFields(managers);
  const unchanged = live !== undefined && deepEqual(result, liveObj);
  setManagedFields(result, keepTimestampsIfUnchanged(managedFieldsOf(live), entries, unchanged));
  return result;
}

function decodeLive(live: JsonObject | undefined): Managers {
  try {
    return decodeManagedFields(managedFieldsOf(live));
  } catch (err) {
    throw new PatchInternalError(`failed to decode managed fields: ${(err as Error).message}`);
  }
}

/** skipNonAppliedManager: an object nobody tracked yet is first credited to "before-first-apply". */
function creditExistingFields(
  managers: Managers,
  liveObj: JsonObject,
  schema: SchemaNode,
  apiVersion: string,
  subresource: string | undefined,
  now: string,
  ignored: FieldSet,
): void {
  const set = stripMeta(writerFields(updateComparison({}, liveObj, schema, apiVersion, ignored)));
  if (set.isEmpty()) return;
  const record: ManagerRecord = {
    manager: beforeFirstApplyManager,
    operation: 'Update',
    apiVersion,
    subresource,
    time: now,
    set,
  };
  managers.set(managerId(record), record);
}

/**
 * Updater.update: every other manager that owns a field this apply changed conflicts (or, forced, loses
 * it); fields that disappeared leave everyone's sets. `kubectl` may take over fields its client-side
 * last-applied annotation still describes.
 */
function settleOwnership(
  managers: Managers,
  selfId: string,
  liveObj: JsonObject,
  merged: JsonObject,
  schema: SchemaNode,
  ignored: FieldSet,
  force: boolean,
  isKubectl: boolean,
): void {
  const c = excludeFields(compare(liveObj, merged, schema), ignored);
  const changed = c.modified.union(c.added);
  const conflicts: Array<{ record: ManagerRecord; set: FieldSet }> = [];
  for (const [id, record] of managers) {
    if (id === selfId) continue;
    const hit = record.set.intersection(changed);
    if (!hit.isEmpty()) conflicts.push({ record, set: hit });
  }
  if (conflicts.length > 0 && !force) {
    let blocking = conflicts;
    const allowed = isKubectl ? allowedConflictsFromLastApplied(liveObj, schema) : undefined;
    if (allowed)
      blocking = conflicts.map((x) => ({ ...x, set: x.set.difference(allowed) })).filter((x) => !x.set.isEmpty());
    if (blocking.length > 0)
      throw applyConflictError(blocking.map((x) => ({ record: x.record, paths: x.set.paths() })));
  }
  for (const x of conflicts) x.record.set = x.record.set.difference(x.set);
  for (const [id, record] of managers) {
    if (id !== selfId) record.set = record.set.difference(c.removed);
    if (record.set.isEmpty() && id !== selfId) managers.delete(id);
  }
}

/** What the endpoint stores: the status subresource changes only status; reset fields keep live values. */
function endpointResult(
  liveObj: JsonObject,
  merged: JsonObject,
  ignored: FieldSet,
  subresource: string | undefined,
  explicitReset: boolean,
): JsonObject {
  if (subresource === 'status' && !explicitReset) {
    const out = withoutManagedFields(liveObj);
    if (merged.status === undefined) delete out.status;
    else out.status = merged.status;
    return out;
  }
  restoreResetFields(merged, liveObj, ignored);
  return merged;
}
