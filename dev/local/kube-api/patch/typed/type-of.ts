/**
 * How structured-merge-diff sees a SchemaNode (kube-openapi's schemaconv rules): maps are granular unless
 * `x-kubernetes-map-type: atomic`; lists are associative for `x-kubernetes-list-type: map|set`, or, on
 * built-in types without a list type, for `x-kubernetes-patch-strategy: merge` (keyed by the patch merge
 * key); every other list is atomic. Without type info (no schema, preserve-unknown-fields) the type is
 * deduced from the value: maps granular, lists atomic.
 */
import type { SchemaNode } from '../../schema/types.ts';
import { isObject } from '../json-value.ts';
import { effectiveSchema } from '../schema-view.ts';

export type TypeInfo =
  | { kind: 'scalar' }
  | { kind: 'map'; atomic: boolean; schema: SchemaNode | undefined }
  | { kind: 'list'; atomic: boolean; keys: readonly string[] | undefined; item: SchemaNode | undefined };

const scalar: TypeInfo = { kind: 'scalar' };
const deducedMap: TypeInfo = { kind: 'map', atomic: false, schema: undefined };
const deducedList: TypeInfo = { kind: 'list', atomic: true, keys: undefined, item: undefined };

export function typeOf(node: SchemaNode | undefined, value: unknown): TypeInfo {
  const s = effectiveSchema(node);
  if (Array.isArray(value)) {
    if (!s || !(s.type === 'array' || s.items)) return deducedList;
    return listType(s);
  }
  if (isObject(value)) {
    if (!s || (s.type && s.type !== 'object') || s.items) return deducedMap;
    return { kind: 'map', atomic: s['x-kubernetes-map-type'] === 'atomic', schema: s };
  }
  return scalar;
}

function listType(s: SchemaNode): TypeInfo {
  const listKind = s['x-kubernetes-list-type'];
  if (listKind === 'map')
    return { kind: 'list', atomic: false, keys: s['x-kubernetes-list-map-keys'] ?? [], item: s.items };
  if (listKind === 'set') return { kind: 'list', atomic: false, keys: undefined, item: s.items };
  if (listKind) return { kind: 'list', atomic: true, keys: undefined, item: s.items };
  const strategy = s['x-kubernetes-patch-strategy'];
  if (strategy === 'merge' || strategy === 'merge,retainKeys') {
    const key = s['x-kubernetes-patch-merge-key'];
    return { kind: 'list', atomic: false, keys: typeof key === 'string' ? [key] : undefined, item: s.items };
  }
  return { kind: 'list', atomic: true, keys: undefined, item: s.items };
}

export interface MapChild {
  schema: SchemaNode | undefined;
  /** A declared property ("named field"): SMD does not make it a set member by itself. */
  declared: boolean;
  /** The schema is a closed struct without this property: SMD's "field not declared in schema". */
  undeclared: boolean;
}

export function mapChild(info: TypeInfo & { kind: 'map' }, key: string): MapChild {
  const s = info.schema;
  if (!s) return { schema: undefined, declared: false, undeclared: false };
  const prop = s.properties?.[key];
  if (prop) return { schema: prop, declared: true, undeclared: false };
  if (typeof s.additionalProperties === 'object')
    return { schema: s.additionalProperties, declared: false, undeclared: false };
  const open = s.additionalProperties === true || s['x-kubernetes-preserve-unknown-fields'] === true || !s.properties;
  return { schema: undefined, declared: false, undeclared: !open };
}

/** Declared property names of an object schema, without looking at a value. */
export function declaredFields(node: SchemaNode | undefined): Record<string, SchemaNode> | undefined {
  const s = effectiveSchema(node);
  return s?.properties;
}

/** Schema of a list's items, without looking at a value. */
export const itemSchema = (node: SchemaNode | undefined) => effectiveSchema(node)?.items;
