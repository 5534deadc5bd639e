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
import { mapChild, type TypeInfo, typeOf } from './type-of.ts';

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

/**
 * `path` is one stack shared by the whole walk (pushed and popped around each child): FieldSet.insert keeps
 * the elements, never the array, and a copy per node was most of a comparison's allocation.
 */
function walk(
  l: unknown,
  r: unknown,
  schema: SchemaNode | undefined,
  path: PathElement[],
  out: Comparison,
  zero?: ZeroPresence,
) {
  // One value on both sides (a status write shares the rest of the object with the stored one): every
  // leaf below compares equal and every key is on both sides, so the subtree adds, changes and removes
  // nothing. Walking it anyway was most of a status write's comparison.
  if (l === r && l !== undefined) return;
  const present = r !== undefined ? r : l;
  if (l !== undefined && r !== undefined && l !== null && r !== null && shape(l) !== shape(r))
    return leaf(l, r, path, out);
  const t: TypeInfo = typeOf(schema, present === null ? (l ?? r) : present);
  if (t.kind === 'scalar') return leaf(l, r, path, out);
  if (t.kind === 'list') {
    const la = Array.isArray(l) ? l : [];
    const ra = Array.isArray(r) ? r : [];
    if (t.atomic || (la.length === 0 && ra.length === 0)) return leaf(l, r, path, out);
    const left = indexItems(t, la);
    const right = indexItems(t, ra);
    for (const [id, item] of left) {
      path.push(item.pe);
      walk(item.value, right.get(id)?.value, t.item, path, out, zero);
      path.pop();
    }
    for (const [id, item] of right) {
      if (left.has(id)) continue;
      path.push(item.pe);
      walk(undefined, item.value, t.item, path, out, zero);
      path.pop();
    }
  } else {
    const lm = isObject(l) ? l : undefined;
    const rm = isObject(r) ? r : undefined;
    if (t.atomic || (isEmptyMap(lm) && isEmptyMap(rm))) return leaf(l, r, path, out);
    if (lm) {
      for (const key in lm) {
        if (!Object.hasOwn(lm, key)) continue;
        path.push(fieldPE(key));
        walk(lm[key], rm && Object.hasOwn(rm, key) ? rm[key] : undefined, mapChild(t, key).schema, path, out, zero);
        path.pop();
      }
    }
    if (rm) {
      for (const key in rm) {
        if (!Object.hasOwn(rm, key) || (lm && Object.hasOwn(lm, key))) continue;
        const field = mapChild(t, key).schema;
        // A field of a present Go struct that its zero value already carries is "modified", never "added".
        const lv = l !== undefined && zero?.(key, field, t.schema) ? null : undefined;
        path.push(fieldPE(key));
        walk(lv, rm[key], field, path, out, zero);
        path.pop();
      }
    }
  }
  if (l === undefined) out.added.insert(path);
  else if (r === undefined) out.removed.insert(path);
}

/** Scalars, atomic values and empty maps and lists are compared by value. */
function leaf(l: unknown, r: unknown, path: Path, out: Comparison): void {
  if (l === undefined) out.added.insert(path);
  else if (r === undefined) out.removed.insert(path);
  else if (!deepEqual(l, r)) out.modified.insert(path);
}

function isEmptyMap(m: Record<string, unknown> | undefined): boolean {
  if (!m) return true;
  for (const key in m) if (Object.hasOwn(m, key)) return false;
  return true;
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
