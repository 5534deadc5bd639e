/**
 * FieldsV1, the wire form of a field set in metadata.managedFields[].fieldsV1: a JSON object whose keys
 * are encoded path elements; `{}` marks a member leaf, and a member that also has children carries
 * `".": {}` (written after its children, as SMD's emitContentsV1 does).
 */
import { isObject } from '../json-value.ts';
import type { JsonObject } from '../types.ts';
import { FieldSet } from './field-set.ts';
import { comparePE, decodePE, displayPath, encodePE, type PathElement } from './path-element.ts';

/**
 * The FieldsV1 object of each set this server encoded, or decoded from a canonical FieldsV1: a set is
 * never changed once built (set algebra returns new sets, and `difference` the set itself when nothing
 * goes), so a manager whose fields a write left alone keeps its encoding. Re-encoding every manager on
 * every write was a quarter of the managed-fields work of a non-apply write.
 */
const encodings = new WeakMap<FieldSet, JsonObject>();
/**
 * The other way: the set each canonical FieldsV1 object stands for. Storage hands every write the stored
 * object's own entries (shared, never changed), so a manager this server encoded is decoded again by a
 * lookup; decoding every manager on every write was a quarter of a status write's managed-fields work.
 */
const decodings = new WeakMap<JsonObject, FieldSet>();

export function fieldSetToFieldsV1(set: FieldSet): JsonObject {
  let out = encodings.get(set);
  if (out === undefined) {
    out = encode(set);
    encodings.set(set, out);
    decodings.set(out, set);
  }
  return out;
}

function encode(set: FieldSet): JsonObject {
  const out: JsonObject = {};
  for (const n of set.sortedNodes()) {
    const children = n.children.isEmpty() ? undefined : encode(n.children);
    const hasChildren = children !== undefined && !isEmptyObject(children);
    if (n.member && hasChildren) children['.'] = {};
    if (n.member || hasChildren) out[encodePE(n.pe)] = children ?? {};
  }
  return out;
}

function isEmptyObject(obj: JsonObject): boolean {
  for (const key in obj) if (Object.hasOwn(obj, key)) return false;
  return true;
}

/** Builds the trie directly from the nested FieldsV1 object: no path is materialized. */
export function fieldsV1ToFieldSet(fields: unknown): FieldSet {
  if (!isObject(fields)) return new FieldSet();
  const known = decodings.get(fields);
  if (known !== undefined) return known;
  const set = new FieldSet();
  if (read(fields, set)) {
    encodings.set(set, fields);
    decodings.set(fields, set);
  }
  return set;
}

/**
 * Adds the object's paths to `set`; true when the object is exactly what `encode` writes for them (so it
 * can stand for the set's encoding): every key decodes and encodes back to itself, keys come in canonical
 * order with `.` last, leaves are `{}`.
 */
function read(obj: JsonObject, set: FieldSet): boolean {
  let canonical = true;
  let previous: PathElement | undefined;
  let sawDot = false;
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) continue;
    if (sawDot) canonical = false;
    const v = obj[k];
    if (k === '.') {
      sawDot = true;
      if (!isObject(v) || !isEmptyObject(v)) canonical = false;
      continue;
    }
    const pe = decodePE(k);
    if (!pe) {
      canonical = false; // unknown element types are dropped, as SMD does
      continue;
    }
    if (encodePE(pe) !== k || (previous !== undefined && comparePE(previous, pe) >= 0)) canonical = false;
    previous = pe;
    if (!isObject(v)) canonical = false;
    if (!isObject(v) || !hasChildEntries(v)) {
      if (isObject(v) && !isEmptyObject(v)) canonical = false; // a lone "." is written as {}
      set.insert([pe]);
      continue;
    }
    const node = set.node(pe, true)!;
    if (Object.hasOwn(v, '.')) node.member = true;
    if (!read(v, node.children)) canonical = false;
  }
  return canonical;
}

function hasChildEntries(obj: JsonObject): boolean {
  for (const key in obj) if (key !== '.' && Object.hasOwn(obj, key)) return true;
  return false;
}

/** The member paths of a FieldsV1 object in message form, e.g. `.spec.containers[name="etcd"].image`. */
export function fieldsV1Paths(fields: unknown): string[] {
  return fieldsV1ToFieldSet(fields).paths().map(displayPath);
}
