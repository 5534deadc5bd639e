/** Small helpers over decoded JSON values (objects, arrays, scalars, null). */
import type { JsonObject } from './types.ts';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  const bo = b as JsonObject;
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) {
    if (!Object.hasOwn(bo, k) || !deepEqual((a as JsonObject)[k], bo[k])) return false;
  }
  return true;
}

/**
 * `obj[key] = value`, except that a `__proto__` key from decoded JSON stays an ordinary own property
 * instead of replacing the object's prototype.
 */
export function setKey(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

export function deepClone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(deepClone) as T;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) setKey(out, k, deepClone(v));
  return out as T;
}

/**
 * Go's `fmt.Sprint("%v")` of a decoded JSON value, as kube-apiserver's error messages print maps and
 * slices: `map[image:x name:y]` (keys sorted), `[a b]`, `<nil>`.
 */
export function goSprint(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goSprint).join(' ')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goSprint(value[k])}`).join(' ')}]`;
  }
  return String(value);
}

/** Go type name of a decoded JSON value, as `reflect.TypeOf` prints it in apimachinery errors. */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  if (isObject(value)) return 'map[string]interface {}';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (typeof value === 'boolean') return 'bool';
  return 'string';
}

const htmlUnsafe = /[<>&\u2028\u2029]/g;
const htmlEscapes: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** JSON.stringify of a string with Go encoding/json's HTML-safe escaping. */
export function goQuote(s: string): string {
  const json = JSON.stringify(s);
  return /[<>&\u2028\u2029]/.test(json) ? json.replace(htmlUnsafe, (c) => htmlEscapes[c] ?? c) : json;
}

/** Go `json.Marshal` of a decoded value: map keys sorted, HTML characters escaped. */
export function goJsonMarshal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(goJsonMarshal).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${goQuote(k)}:${goJsonMarshal((value as JsonObject)[k])}`).join(',')}}`;
}
