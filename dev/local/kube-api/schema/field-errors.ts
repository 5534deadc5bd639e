/**
 * kube-apiserver's field errors (k8s.io/apimachinery/pkg/util/validation/field) as Status causes: the
 * same reasons, and messages built the way `Error.ErrorBody()` builds them, including how Go prints the
 * offending value, because clients and people compare these strings.
 */
import type { StatusCause } from './types.ts';

export type FieldErrorReason =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

const TYPE_TEXT: Record<FieldErrorReason, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** Marks a value that ErrorBody leaves out (e.g. TooMany without a count). */
export const OMIT_VALUE = Symbol('omit value');

const VALUELESS = new Set<FieldErrorReason>([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'InternalError',
]);

export function fieldError(reason: FieldErrorReason, field: string, value: unknown, detail = ''): StatusCause {
  let body = TYPE_TEXT[reason];
  if (!VALUELESS.has(reason) && value !== OMIT_VALUE) body += `: ${goValue(value)}`;
  if (detail) body += `: ${detail}`;
  return { reason, message: body, field };
}

export const required = (field: string, detail = '') => fieldError('FieldValueRequired', field, undefined, detail);
export const invalid = (field: string, value: unknown, detail: string) =>
  fieldError('FieldValueInvalid', field, value, detail);
export const typeInvalid = (field: string, value: unknown, detail: string) =>
  fieldError('FieldValueTypeInvalid', field, value, detail);
export const forbidden = (field: string, detail: string) => fieldError('FieldValueForbidden', field, undefined, detail);
export const duplicate = (field: string, value: unknown) => fieldError('FieldValueDuplicate', field, value);

export function notSupported(field: string, value: unknown, supported: string[]): StatusCause {
  const detail = supported.length > 0 ? `supported values: ${supported.map((v) => goQuote(v)).join(', ')}` : '';
  return fieldError('FieldValueNotSupported', field, value, detail);
}

export function tooLong(field: string, maxLength: number): StatusCause {
  const detail =
    maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return fieldError('FieldValueTooLong', field, undefined, detail);
}

export function tooMany(field: string, actual: number, max: number): StatusCause {
  // 1.32 still says "1 items"; the singular came later.
  const detail = max >= 0 ? `must have at most ${max} items` : 'has too many items';
  return fieldError('FieldValueTooMany', field, actual >= 0 ? actual : OMIT_VALUE, detail);
}

/** A bad value whose Go rendering is given verbatim (typed Go structs the JSON cannot reproduce). */
export class GoLiteral {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** How `ErrorBody` prints a bad value: simple types with %v / %q, anything else with %#v. */
export function goValue(value: unknown): string {
  if (value instanceof GoLiteral) return value.text;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goSyntax(value);
}

/** Go's %q, close enough for API values (JSON escaping matches it for printable text). */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/**
 * A JSON number as Go prints the value it decodes to: integers are int64, others float64 in %v, which
 * switches to exponent form from 1e+06 on (shortest 'g' with precision 6 for that decision).
 */
export function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 21 || (exp >= 6 && !Number.isInteger(n))) {
    const [mantissa, e = ''] = n.toExponential().split('e'); // toExponential always has an 'e'
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '').padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(n);
}

/** Go's %#v of the unstructured value (map[string]interface {} / []interface {}). */
export function goSyntax(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map((v) => goSyntax(v)).join(', ')}}`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `map[string]interface {}{${entries.map(([k, v]) => `${goQuote(k)}:${goSyntax(v)}`).join(', ')}}`;
}
