/**
 * FieldsV1, the wire form of a field set in metadata.managedFields[].fieldsV1: a JSON object whose keys
 * are encoded path elements; `{}` marks a member leaf, and a member that also has children carries
 * `".": {}` (written after its children, as SMD's emitContentsV1 does).
 */
import { isObject } from '../json-value.ts';
import type { JsonObject } from '../types.ts';
import { FieldSet } from './field-set.ts';
import { decodePE, displayPath, encodePE, type Path } from './path-element.ts';

export function fieldSetToFieldsV1(set: FieldSet): JsonObject {
  const out: JsonObject = {};
  for (const n of set.sortedNodes()) {
    const children = n.children.isEmpty() ? {} : fieldSetToFieldsV1(n.children);
    if (n.member && Object.keys(children).length > 0) children['.'] = {};
    if (n.member || Object.keys(children).length > 0) out[encodePE(n.pe)] = children;
  }
  return out;
}

export function fieldsV1ToFieldSet(fields: unknown): FieldSet {
  const set = new FieldSet();
  if (isObject(fields)) read(fields, [], set);
  return set;
}

function read(obj: JsonObject, prefix: Path, set: FieldSet): void {
  for (const [k, v] of Object.entries(obj)) {
    if (k === '.') continue;
    const pe = decodePE(k);
    if (!pe) continue; // unknown element types are dropped, as SMD does
    const path = [...prefix, pe];
    const children = isObject(v) ? Object.keys(v).filter((c) => c !== '.') : [];
    if (children.length === 0 || (isObject(v) && Object.hasOwn(v, '.'))) set.insert(path);
    if (children.length > 0) read(v as JsonObject, path, set);
  }
}

/** The member paths of a FieldsV1 object in message form, e.g. `.spec.containers[name="etcd"].image`. */
export function fieldsV1Paths(fields: unknown): string[] {
  return fieldsV1ToFieldSet(fields).paths().map(displayPath);
}
