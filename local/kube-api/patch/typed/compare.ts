/**
 * TypedValue.Compare: which fields `rhs` added, modified or removed relative to `lhs`. Leaves (scalars,
 * atomic or empty lists and maps) are compared by value; maps, associative lists and their items are also
 * reported themselves when they appear or disappear as a whole.
 */
import type { SchemaNode } from '../../schema/types.ts';
import { FieldSet } from '../fieldpath/field-set.ts';
import { encodePE, fieldPE, type Path, type PathElement } from '../fieldpath/path-element.ts';
import { deepEqual, isObject } from '../json-value.ts';
import { listItemPE } from './list-items.ts';
import { mapChild, typeOf, type TypeInfo } from './type-of.ts';

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * Decides whether a field absent from `lhs` counts as present-but-empty, as it does when `lhs` is a Go
 * struct whose zero value still serializes the field (value structs, fields without omitempty).
 */
export type ZeroPresence = (key: string, field: SchemaNode | undefined, parent: SchemaNode | undefined) => boolean;

export function compare(lhs: unknown, rhs: unknown, schema: SchemaNode | undefined, zero?: ZeroPresence): Comparison {
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  walk(lhs, rhs, schema, [], out, zero);
  return out;
}

/** Remove ignored fields (and everything under them) from a comparison (Comparison.ExcludeFields). */
export function excludeFields(c: Comparison, ignored: FieldSet | undefined): Comparison {
  if (!ignored || ignored.isEmpty()) return c;
  return {
    added: c.added.recursiveDifference(ignored),
    modified: c.modified.recursiveDifference(ignored),
    removed: c.removed.recursiveDifference(ignored),
  };
}

const shape = (v: unknown) => (Array.isArray(v) ? 'list' : isObject(v) ? 'map' : 'scalar');

function walk(
  l: unknown,
  r: unknown,
  schema: SchemaNode | undefined,
  path: Path,
  out: Comparison,
  zero?: ZeroPresence,
) {
  const leaf = () => {
    if (l === undefined) out.added.insert(path);
    else if (r === undefined) out.removed.insert(path);
    else if (!deepEqual(l, r)) out.modified.insert(path);
  };
  const present = r !== undefined ? r : l;
  if (l !== undefined && r !== undefined && l !== null && r !== null && shape(l) !== shape(r)) return leaf();
  const t: TypeInfo = typeOf(schema, present === null ? (l ?? r) : present);
  if (t.kind === 'scalar') return leaf();
  if (t.kind === 'list') {
    const la = Array.isArray(l) ? l : [];
    const ra = Array.isArray(r) ? r : [];
    if (t.atomic || (la.length === 0 && ra.length === 0)) return leaf();
    const left = indexItems(t, la);
    const right = indexItems(t, ra);
    for (const [id, item] of left) walk(item.value, right.get(id)?.value, t.item, [...path, item.pe], out, zero);
    for (const [id, item] of right)
      if (!left.has(id)) walk(undefined, item.value, t.item, [...path, item.pe], out, zero);
  } else {
    const lm = isObject(l) ? l : undefined;
    const rm = isObject(r) ? r : undefined;
    const lEmpty = !lm || Object.keys(lm).length === 0;
    const rEmpty = !rm || Object.keys(rm).length === 0;
    if (t.atomic || (lEmpty && rEmpty)) return leaf();
    for (const key of lm ? Object.keys(lm) : []) {
      walk(
        lm![key],
        rm && Object.hasOwn(rm, key) ? rm[key] : undefined,
        mapChild(t, key).schema,
        [...path, fieldPE(key)],
        out,
        zero,
      );
    }
    for (const key of rm ? Object.keys(rm) : []) {
      if (lm && Object.hasOwn(lm, key)) continue;
      const field = mapChild(t, key).schema;
      // A field of a present Go struct that its zero value already carries is "modified", never "added".
      const lv = l !== undefined && zero?.(key, field, t.schema) ? null : undefined;
      walk(lv, rm![key], field, [...path, fieldPE(key)], out, zero);
    }
  }
  if (l === undefined) out.added.insert(path);
  else if (r === undefined) out.removed.insert(path);
}

function indexItems(
  t: TypeInfo & { kind: 'list' },
  items: unknown[],
): Map<string, { pe: PathElement; value: unknown }> {
  const out = new Map<string, { pe: PathElement; value: unknown }>();
  for (const item of items) {
    let pe: PathElement;
    try {
      pe = listItemPE(t.keys, item, t.item);
    } catch {
      continue; // invalid items were rejected before; here they are simply not tracked
    }
    const id = encodePE(pe);
    if (!out.has(id)) out.set(id, { pe, value: item });
  }
  return out;
}
