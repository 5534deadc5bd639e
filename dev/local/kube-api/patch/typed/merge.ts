/**
 * TypedValue.Merge for server-side apply: the applied configuration (rhs) wins at every leaf; maps merge
 * key by key; associative lists merge item by item, keeping the live order for live items and placing new
 * items where the configuration puts them (SMD's visitListItems ordering).
 */
import type { SchemaNode } from '../../schema/types.ts';
import { encodePE } from '../fieldpath/path-element.ts';
import { isObject, setKey } from '../json-value.ts';
import type { JsonObject } from '../types.ts';
import { listItemPE } from './list-items.ts';
import { mapChild, typeOf } from './type-of.ts';

const shape = (v: unknown) => (Array.isArray(v) ? 'list' : isObject(v) ? 'map' : 'scalar');

export function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode | undefined): unknown {
  if (applied === undefined) return live;
  if (applied === null) {
    // A null map or list in the configuration merges as an empty one: granular live content stays
    // (SMD walks the live items with no counterpart); scalars and atomic values become null.
    const t = typeOf(schema, live);
    return t.kind === 'scalar' || t.atomic ? null : live;
  }
  if (live === undefined || live === null || shape(live) !== shape(applied)) return withoutNulls(applied);
  const t = typeOf(schema, applied);
  if (t.kind === 'scalar') return applied;
  if (t.kind === 'list') {
    const l = live as unknown[];
    const r = applied as unknown[];
    if (t.atomic || (l.length === 0 && r.length === 0)) return withoutNulls(applied);
    let invalid = 0;
    const idOf = (item: unknown) => {
      try {
        return encodePE(listItemPE(t.keys, item, t.item));
      } catch {
        return `#invalid-${invalid++}`; // a live item SMD cannot key is carried along untouched
      }
    };
    return mergeListItems(l, r, idOf, (a, b) => mergeApplied(a, b, t.item));
  }
  const l = live as JsonObject;
  const r = applied as JsonObject;
  if (t.atomic || (Object.keys(l).length === 0 && Object.keys(r).length === 0)) return withoutNulls(applied);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(l))
    setKey(out, k, Object.hasOwn(r, k) ? mergeApplied(v, r[k], mapChild(t, k).schema) : v);
  for (const [k, v] of Object.entries(r)) if (!Object.hasOwn(l, k)) setKey(out, k, withoutNulls(v));
  // An explicit null in the configuration clears the field.
  for (const [k, v] of Object.entries(out)) if (v === null && Object.hasOwn(r, k) && r[k] === null) delete out[k];
  return out;
}

/** A configuration value taken as is, minus map keys set to null (they mean "unset"). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) setKey(out, k, withoutNulls(v));
  return out;
}

function mergeListItems(
  lhs: unknown[],
  rhs: unknown[],
  idOf: (item: unknown) => string,
  mergeItem: (l: unknown, r: unknown) => unknown,
): unknown[] {
  const index = (items: unknown[]) => {
    const order: string[] = [];
    const byId = new Map<string, unknown>();
    for (const item of items) {
      const id = idOf(item);
      if (byId.has(id)) continue;
      byId.set(id, item);
      order.push(id);
    }
    return { order, byId };
  };
  const L = index(lhs);
  const R = index(rhs);
  const shared = R.order.filter((id) => L.byId.has(id));
  let nextShared = 0;
  const out: unknown[] = [];
  const merged = new Set<string>();
  let li = 0;
  let ri = 0;
  while (li < L.order.length || ri < R.order.length) {
    // Each is undefined once its side is used up (ids are strings).
    const lid = L.order[li];
    const rid = R.order[ri];
    if (lid !== undefined && rid !== undefined) {
      if (lid === rid) {
        out.push(mergeItem(L.byId.get(lid), R.byId.get(lid)));
        merged.add(lid);
        li++;
        ri++;
        nextShared = shared.indexOf(lid) + 1;
        continue;
      }
      // A shared item, but not the one the configuration wants next: it comes later.
      if (R.byId.has(lid) && nextShared < shared.length && shared[nextShared] !== lid) {
        li++;
        continue;
      }
    }
    if (lid !== undefined) {
      if (!R.byId.has(lid)) {
        out.push(L.byId.get(lid));
        li++;
        continue;
      }
      if (merged.has(lid)) {
        li++;
        continue;
      }
    }
    if (rid !== undefined) {
      out.push(L.byId.has(rid) ? mergeItem(L.byId.get(rid), R.byId.get(rid)) : withoutNulls(R.byId.get(rid)));
      merged.add(rid);
      ri++;
      if (shared[nextShared] === rid) nextShared++;
    }
  }
  return out;
}
