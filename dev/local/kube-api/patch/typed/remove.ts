/**
 * RemoveItems-style removal of fields, map keys and list items (with everything below them). A map or
 * list that ends up empty is dropped too (SMD leaves null, which kube's conversion then omits).
 */
import type { SchemaNode } from '../../schema/types.ts';
import { fieldPE, type PathElement } from '../fieldpath/path-element.ts';
import { isObject, setKey } from '../json-value.ts';
import type { JsonObject } from '../types.ts';
import { listItemPE } from './list-items.ts';
import { mapChild, typeOf } from './type-of.ts';

/**
 * Walk `value` alongside some state (e.g. field sets narrowed to the current node): `rule` says whether
 * a child is removed, kept whole, or descended into with the state `descend` narrows for it.
 */
export function removeWith<S>(
  value: unknown,
  state: S,
  schema: SchemaNode | undefined,
  rule: (state: S, pe: PathElement) => 'remove' | 'keep' | 'descend',
  descend: (state: S, pe: PathElement) => S,
): unknown {
  const t = typeOf(schema, value);
  if (t.kind === 'scalar' || t.atomic) return value;
  if (t.kind === 'list') {
    const out: unknown[] = [];
    for (const item of value as unknown[]) {
      let pe: PathElement;
      try {
        pe = listItemPE(t.keys, item, t.item);
      } catch {
        out.push(item);
        continue;
      }
      const verdict = rule(state, pe);
      if (verdict === 'remove') continue;
      if (verdict === 'keep') out.push(item);
      else {
        const v = removeWith(item, descend(state, pe), t.item, rule, descend);
        if (v !== undefined) out.push(v);
      }
    }
    return out.length > 0 ? out : undefined;
  }
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    const pe = fieldPE(k);
    const verdict = rule(state, pe);
    if (verdict === 'remove') continue;
    if (verdict === 'keep') setKey(out, k, v);
    else {
      const r = removeWith(v, descend(state, pe), mapChild(t, k).schema, rule, descend);
      if (r !== undefined) setKey(out, k, r);
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
