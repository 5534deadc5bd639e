/** What a non-apply write changed, as kube's Updater.Update computes it for the writing manager. */
import type { SchemaNode } from '../../schema/types.ts';
import type { FieldSet } from '../fieldpath/field-set.ts';
import { type Comparison, compare, excludeFields } from '../typed/compare.ts';
import type { JsonObject } from '../types.ts';
import { zeroPresenceFor } from './zero-presence.ts';

export function updateComparison(
  before: JsonObject,
  after: JsonObject,
  schema: SchemaNode,
  apiVersion: unknown,
  ignored: FieldSet,
): Comparison {
  return excludeFields(compare(before, after, schema, zeroPresenceFor(apiVersion)), ignored);
}

/** The writer's new fields: everything it added or modified, minus what it removed. */
export const writerFields = (c: Comparison): FieldSet => c.modified.union(c.added).difference(c.removed);
