/**
 * managedFields for non-apply writes (create, update, patch), as kube's field manager records them: the
 * writer (operation Update) gains every field it added or changed, and every manager loses fields that
 * changed or disappeared. An existing object without managedFields stays untracked, and a client may
 * replace the list itself (kube decodes managedFields from the new object when it carries any).
 */

import { deepEqual } from './json-value.ts';
import { capUpdateManagers } from './managed/cap-managers.ts';
import type { Managers } from './managed/entries.ts';
import {
  decodeManagedFields,
  encodeManagedFields,
  keepTimestampsIfUnchanged,
  kubeTime,
  managerId,
} from './managed/entries.ts';
import { managedFieldsOf, withoutManagedFields } from './managed/object-parts.ts';
import { resetFieldSet, stripMeta } from './managed/strip.ts';
import { updateComparison, writerFields } from './managed/updater-changes.ts';
import { rootSchema } from './typed/object-meta.ts';
import type { ManagedFieldsEntry, ManagedFieldsUpdateOptions } from './types.ts';

export function updateManagedFields(input: ManagedFieldsUpdateOptions): ManagedFieldsEntry[] {
  const { before, after, manager, subresource } = input;
  const managers = startingManagers(before, after, subresource);
  // skipNonAppliedManager: only creates start tracking.
  if (managers.size === 0 && before !== undefined) return [];

  const schema = rootSchema(input.schema);
  const liveObj = before ? withoutManagedFields(before) : {};
  const newObj = withoutManagedFields(after);
  const apiVersion = String(after.apiVersion ?? before?.apiVersion ?? '');
  const ignored = resetFieldSet(input.resetFields, subresource, liveObj, newObj);
  const c = updateComparison(liveObj, newObj, schema, apiVersion, ignored);

  const lost = c.modified.union(c.added).union(c.removed);
  for (const [id, record] of managers) {
    record.set = record.set.difference(lost);
    if (record.set.isEmpty()) managers.delete(id);
  }
  const gained = stripMeta(writerFields(c));
  if (!gained.isEmpty()) {
    const id = managerId({ manager, operation: 'Update', apiVersion, subresource });
    const previous = managers.get(id);
    managers.set(id, {
      manager,
      operation: 'Update',
      apiVersion,
      subresource,
      time: kubeTime(input.now),
      set: previous ? previous.set.union(gained) : gained,
    });
  }
  capUpdateManagers(managers);
  const entries = encodeManagedFields(managers);
  return keepTimestampsIfUnchanged(
    managedFieldsOf(before),
    entries,
    before !== undefined && deepEqual(liveObj, newObj),
  );
}

/** FieldManager.Update: the new object's managedFields when it carries valid ones, else the live ones. */
function startingManagers(
  before: ManagedFieldsUpdateOptions['before'],
  after: ManagedFieldsUpdateOptions['after'],
  subresource?: string,
): Managers {
  if (!subresource) {
    try {
      const sent = decodeManagedFields(managedFieldsOf(after));
      if (sent.size > 0) return sent;
    } catch {
      // fall back to the live object's, so a client that mangles the list cannot lose it
    }
  }
  try {
    return decodeManagedFields(managedFieldsOf(before));
  } catch {
    return new Map();
  }
}
