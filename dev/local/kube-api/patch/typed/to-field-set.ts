/**
 * ToFieldSet: the fields a value sets. Scalars, atomic lists and atomic maps are members; items of
 * associative lists are members (and so are their fields); map keys are members unless they are declared
 * properties of a struct holding a non-empty value. With `errors`, also reports what SMD's typed conversion rejects (missing list
 * keys, duplicates, undeclared fields) in its message form.
 */
import type { SchemaNode } from '../../schema/types.ts';
import { FieldSet } from '../fieldpath/field-set.ts';
import { displayPath, encodePE, fieldPE, type PathElement } from '../fieldpath/path-element.ts';
import { isObject } from '../json-value.ts';
import { listItemPE } from './list-items.ts';
import { mapChild, typeOf } from './type-of.ts';

export function toFieldSet(value: unknown, schema: SchemaNode | undefined, errors?: string[]): FieldSet {
  const set = new FieldSet();
  walk(value, schema, [], set, errors);
  return set;
}

/** `path` is one stack for the whole walk, as in compare.ts: FieldSet.insert keeps elements, not arrays. */
function walk(
  value: unknown,
  schema: SchemaNode | undefined,
  path: PathElement[],
  set: FieldSet,
  errors?: string[],
): void {
  const t = typeOf(schema, value);
  if (t.kind === 'scalar') {
    set.insert(path);
    return;
  }
  if (t.kind === 'list') {
    if (t.atomic) {
      set.insert(path);
      return;
    }
    if (!Array.isArray(value)) return;
    const seen = new Set<string>();
    value.forEach((item, i) => {
      let pe: PathElement;
      try {
        pe = listItemPE(t.keys, item, t.item);
      } catch (err) {
        errors?.push(`${displayPath(path)}: element ${i}: ${(err as Error).message}`);
        return;
      }
      const id = encodePE(pe);
      if (seen.has(id)) errors?.push(`${displayPath(path)}: duplicate entries for key ${displayPath([pe])}`);
      seen.add(id);
      path.push(pe);
      walk(item, t.item, path, set, errors);
      set.insert(path);
      path.pop();
    });
    return;
  }
  if (t.atomic) {
    set.insert(path);
    return;
  }
  if (!isObject(value)) return;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = value[key];
    const c = mapChild(t, key);
    path.push(fieldPE(key));
    if (c.undeclared) errors?.push(`${displayPath(path)}: field not declared in schema`);
    walk(v, c.schema, path, set, errors);
    // Undeclared keys are always members; declared fields only when null or an empty map (a leaf).
    if (!c.declared || v === null || (isObject(v) && Object.keys(v).length === 0)) set.insert(path);
    path.pop();
  }
}
