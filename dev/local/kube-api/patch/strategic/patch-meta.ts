/** Patch strategy and merge key of a field, from its schema's x-kubernetes-patch-* extensions. */
import type { SchemaNode } from '../../schema/types.ts';
import { effectiveSchema, propertySchema } from '../schema-view.ts';
import { internal } from './errors.ts';

export interface PatchMeta {
  /** '' (replace lists / merge maps), 'merge' or 'replace'; retainKeys is split off. */
  strategy: string;
  mergeKey: string;
}

export interface FieldLookup {
  /** Schema to recurse with: the field's own schema for maps, its items' schema for lists. */
  schema: SchemaNode | undefined;
  meta: PatchMeta;
}

export function lookupMapField(parent: SchemaNode | undefined, key: string): FieldLookup {
  const field = propertySchema(parent, key);
  return { schema: field, meta: patchMetaOf(field) };
}

export function lookupListField(parent: SchemaNode | undefined, key: string): FieldLookup {
  const field = propertySchema(parent, key);
  return { schema: effectiveSchema(field)?.items, meta: patchMetaOf(field) };
}

/** extractRetainKeysPatchStrategy: "merge,retainKeys" → merge; "retainKeys" → ''. */
function patchMetaOf(field: SchemaNode | undefined): PatchMeta {
  const f = effectiveSchema(field);
  const raw = f?.['x-kubernetes-patch-strategy'];
  const mergeKey = typeof f?.['x-kubernetes-patch-merge-key'] === 'string' ? f['x-kubernetes-patch-merge-key'] : '';
  if (!raw) return { strategy: '', mergeKey };
  const strategies = raw.split(',');
  const others = strategies.filter((s) => s !== 'retainKeys');
  if (strategies.length > 2 || others.length > 1 || (strategies.length === 2 && others.length === 2)) {
    throw internal(`unexpected patch strategy: [${strategies.join(' ')}]`);
  }
  return { strategy: others[0] ?? '', mergeKey };
}
