/**
 * Path elements of structured-merge-diff field paths, with their FieldsV1 encoding (`f:name`,
 * `k:{"name":"etcd"}`, `v:"value"`, `i:3`) and their message form (`.name`, `[name="etcd"]`, `[="v"]`, `[3]`).
 */
import { goJsonMarshal, goQuote, isObject } from '../json-value.ts';

export type PathElement =
  | { readonly field: string }
  | { readonly key: ReadonlyArray<readonly [string, unknown]> }
  | { readonly value: unknown }
  | { readonly index: number };

export type Path = readonly PathElement[];

/**
 * Field elements and their encodings are shared per name: a managed-fields pass makes one for every key of
 * every object it walks, and these were among the local API's largest allocations. Names come from
 * clients' objects, so the tables stop growing at a bound and later names get fresh ones.
 */
const fieldElements = new Map<string, PathElement>();
const fieldIds = new Map<string, string>();
/** Bound of each table of shared elements and encodings in this file (field elements, their ids, decoded keys). */
const SHARED_ELEMENTS_MAX = 8192;

export function fieldPE(name: string): PathElement {
  let pe = fieldElements.get(name);
  if (pe === undefined) {
    pe = { field: name };
    if (fieldElements.size < SHARED_ELEMENTS_MAX) fieldElements.set(name, pe);
  }
  return pe;
}

/** A key path element; the key fields are sorted by name, as SMD keeps them. */
export function keyPE(fields: Array<readonly [string, unknown]>): PathElement {
  // Most lists are keyed by one field (name, containerPort): nothing to sort.
  const [only] = fields;
  if (fields.length === 1 && only) return { key: [only] };
  return { key: [...fields].sort((a, b) => compareStrings(a[0], b[0])) };
}

const encoded = new WeakMap<PathElement, string>();

/** FieldsV1 encoding of one element; also the identity used by FieldSet (cached: it is hot). */
export function encodePE(pe: PathElement): string {
  if ('field' in pe) {
    let id = fieldIds.get(pe.field);
    if (id === undefined) {
      id = `f:${pe.field}`;
      if (fieldIds.size < SHARED_ELEMENTS_MAX) fieldIds.set(pe.field, id);
    }
    return id;
  }
  let id = encoded.get(pe);
  if (id === undefined) {
    if ('key' in pe) id = `k:{${pe.key.map(([n, v]) => `${goQuote(n)}:${goJsonMarshal(v)}`).join(',')}}`;
    else if ('value' in pe) id = `v:${goJsonMarshal(pe.value)}`;
    else id = `i:${pe.index}`;
    encoded.set(pe, id);
  }
  return id;
}

/**
 * Decoded elements by their FieldsV1 key: every write decodes every manager's fields, and the same few
 * hundred keys (`f:metadata`, `k:{"name":"etcd"}`) come back each time. Elements are immutable, so they
 * are shared; keys come from clients, so the table stops growing at a bound.
 */
const decoded = new Map<string, PathElement>();

/** DeserializePathElement; undefined for an element type this version does not know (it is skipped). */
export function decodePE(s: string): PathElement | undefined {
  const known = decoded.get(s);
  if (known !== undefined) return known;
  const pe = decodeUncached(s);
  if (pe !== undefined && decoded.size < SHARED_ELEMENTS_MAX) decoded.set(s, pe);
  return pe;
}

function decodeUncached(s: string): PathElement | undefined {
  if (s.length < 2 || s[1] !== ':') throw new Error(`missing colon: ${s}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldPE(body);
    case 'v':
      return { value: JSON.parse(body) };
    case 'k': {
      const parsed: unknown = JSON.parse(body);
      if (!isObject(parsed)) throw new Error(`key element is not an object: ${s}`);
      return keyPE(Object.entries(parsed));
    }
    case 'i': {
      const n = Number(body);
      if (!Number.isInteger(n)) throw new Error(`invalid index: ${s}`);
      return { index: n };
    }
    default:
      return undefined;
  }
}

/** value.ToString: how SMD prints a value inside a path. */
function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${k}=${valueString(v[k])}`)
      .join(',')}}`;
  return String(v);
}

export function displayPE(pe: PathElement): string {
  if ('field' in pe) return `.${pe.field}`;
  if ('key' in pe) return `[${pe.key.map(([n, v]) => `${n}=${valueString(v)}`).join(',')}]`;
  if ('value' in pe) return `[=${valueString(pe.value)}]`;
  return `[${pe.index}]`;
}

/** Path in kube's conflict message form, e.g. `.spec.containers[name="etcd"].image`. */
export const displayPath = (path: Path): string => path.map(displayPE).join('');

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** value.Compare: numbers < strings < booleans < lists < maps < null. */
function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) =>
    typeof v === 'number'
      ? 0
      : typeof v === 'string'
        ? 1
        : typeof v === 'boolean'
          ? 2
          : Array.isArray(v)
            ? 3
            : isObject(v)
              ? 4
              : 5;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return (a as number) - (b as number);
  if (ra === 1) return compareStrings(a as string, b as string);
  if (ra === 2) return Number(a) - Number(b);
  if (ra === 5) return 0;
  return compareStrings(goJsonMarshal(a), goJsonMarshal(b));
}

/** PathElement.Compare: fields < keys < values < indexes, then by content. */
export function comparePE(a: PathElement, b: PathElement): number {
  const rank = (pe: PathElement) => ('field' in pe ? 0 : 'key' in pe ? 1 : 'value' in pe ? 2 : 3);
  const d = rank(a) - rank(b);
  if (d !== 0) return d;
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field);
  if ('key' in a) {
    const bk = (b as { key: ReadonlyArray<readonly [string, unknown]> }).key;
    for (let i = 0; ; i++) {
      const ak = a.key[i];
      const bki = bk[i];
      if (ak === undefined && bki === undefined) return 0;
      if (ak === undefined) return -1;
      if (bki === undefined) return 1;
      const c = compareStrings(ak[0], bki[0]) || compareValues(ak[1], bki[1]);
      if (c !== 0) return c;
    }
  }
  if ('value' in a) return compareValues(a.value, (b as { value: unknown }).value);
  return a.index - (b as { index: number }).index;
}
