import { isIP } from 'node:net';
import { type Cidr, parseCidr, parseWildcard, type Wildcard } from './pattern-values.ts';

/**
 * Validation and compilation of EventBridge event patterns. The rules follow EventBridge's documented
 * behaviour (see test/dev/local/bus/pattern.test.ts for the table of cases and where each comes from): every field
 * value is an array of match values or a nested object, every match object holds exactly one operator,
 * and each operator has its own value shape.
 */

/** An event pattern EventBridge would refuse; `path` names the offending place, e.g. `detail.state[0]`. */
export class InvalidPatternError extends Error {
  readonly path: string;
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(path ? `invalid event pattern at ${path}: ${reason}` : `invalid event pattern: ${reason}`);
    this.name = 'InvalidPatternError';
    this.path = path;
    this.reason = reason;
  }
}

/** Numeric matching is limited to ±5.0e9 (EventBridge content filtering, "Numeric matching"). */
export const NUMERIC_LIMIT = 5e9;

export type Primitive = string | number | boolean | null;

export type ValueMatcher =
  | { op: 'exact'; value: Primitive; ip?: Cidr }
  | { op: 'prefix'; value: string; ignoreCase: boolean }
  | { op: 'suffix'; value: string; ignoreCase: boolean }
  | { op: 'equals-ignore-case'; value: string }
  | { op: 'wildcard'; wildcard: Wildcard }
  | { op: 'numeric'; lower?: Bound; upper?: Bound }
  | { op: 'cidr'; cidr: Cidr }
  | { op: 'exists'; value: boolean }
  | { op: 'anything-but'; but: AnythingBut };

export interface Bound {
  value: number;
  inclusive: boolean;
}

export type AnythingBut =
  | { kind: 'values'; strings: Set<string>; numbers: number[] }
  | { kind: 'prefix'; values: string[] }
  | { kind: 'suffix'; values: string[] }
  | { kind: 'equals-ignore-case'; values: string[] }
  | { kind: 'wildcard'; wildcards: Wildcard[] };

export type PatternNode = { type: 'leaf'; matchers: ValueMatcher[] } | { type: 'object'; pattern: CompiledPattern };

export interface CompiledPattern {
  fields: { key: string; node: PatternNode }[];
  /** Each entry is one `$or`: the object matches when any alternative matches. */
  ors: CompiledPattern[][];
}

type Json = unknown;

const describe = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'object'
        ? 'an object'
        : `${typeof v} ${JSON.stringify(v)}`;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Operator names Event Ruler reserves; they cannot be field names inside `$or` alternatives. */
const RESERVED_IN_OR = new Set([
  'exactly',
  'equals-ignore-case',
  'prefix',
  'suffix',
  'anything-but',
  'exists',
  'wildcard',
  'numeric',
  'cidr',
  '=',
  '<',
  '<=',
  '>',
  '>=',
  'regex',
  'not-wildcard',
  'not-equals-ignore-case',
  'date-after',
  'date-on-or-after',
  'date-before',
  'date-on-or-before',
  'in-date-range',
  'ip-address-in-range',
  'ip-address-not-in-range',
]);

export function compileObject(obj: Json, path: string, insideOr = false): CompiledPattern {
  if (!isPlainObject(obj)) throw new InvalidPatternError(path, `expected a JSON object, got ${describe(obj)}`);
  const keys = Object.keys(obj);
  if (keys.length === 0) throw new InvalidPatternError(path, 'empty objects are not allowed');
  const compiled: CompiledPattern = { fields: [], ors: [] };
  for (const key of keys) {
    const value = obj[key];
    const here = join(path, key);
    if (key === '$or') {
      compiled.ors.push(compileOr(value, here));
    } else if (insideOr && RESERVED_IN_OR.has(key)) {
      throw new InvalidPatternError(here, `"${key}" is a reserved operator name and cannot be a field name inside $or`);
    } else if (Array.isArray(value)) {
      compiled.fields.push({ key, node: { type: 'leaf', matchers: compileLeaf(value, here) } });
    } else if (isPlainObject(value)) {
      compiled.fields.push({ key, node: { type: 'object', pattern: compileObject(value, here, insideOr) } });
    } else {
      throw new InvalidPatternError(
        here,
        `match values must be in an array (e.g. [${JSON.stringify(value)}]) or be a nested object, got ${describe(value)}`,
      );
    }
  }
  return compiled;
}

function compileOr(value: Json, path: string): CompiledPattern[] {
  if (!Array.isArray(value) || value.length < 2) {
    throw new InvalidPatternError(path, '$or must be an array of at least 2 pattern objects');
  }
  return value.map((alt, i) => {
    if (!isPlainObject(alt))
      throw new InvalidPatternError(
        `${path}[${i}]`,
        `each $or alternative must be a pattern object, got ${describe(alt)}`,
      );
    return compileObject(alt, `${path}[${i}]`, true);
  });
}

function compileLeaf(values: Json[], path: string): ValueMatcher[] {
  if (values.length === 0)
    throw new InvalidPatternError(path, 'empty arrays are not allowed: give at least one value to match');
  return values.map((v, i) => compileValue(v, `${path}[${i}]`));
}

function compileValue(v: Json, path: string): ValueMatcher {
  if (typeof v === 'string') {
    // Event Ruler compares IP address literals as addresses, so 2001:db8::1 equals 2001:0db8:0:0:0:0:0:1.
    const version = isIP(v);
    const ip = version ? parseCidr(`${v}/${version === 4 ? 32 : 128}`, { singleAddress: true }) : null;
    return ip !== null && typeof ip === 'object' ? { op: 'exact', value: v, ip } : { op: 'exact', value: v };
  }
  if (v === null || typeof v === 'boolean') return { op: 'exact', value: v };
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new InvalidPatternError(path, 'numbers must be finite');
    return { op: 'exact', value: v };
  }
  if (Array.isArray(v)) throw new InvalidPatternError(path, 'nested arrays are not allowed in a match list');
  if (!isPlainObject(v)) throw new InvalidPatternError(path, `unsupported match value ${describe(v)}`);
  const keys = Object.keys(v);
  if (keys.length !== 1) {
    throw new InvalidPatternError(
      path,
      keys.length === 0
        ? 'empty match object: give one operator such as {"prefix": "..."}'
        : `a match object holds exactly one operator, got ${keys.map((k) => `"${k}"`).join(', ')}`,
    );
  }
  const op = keys[0];
  const arg = v[op];
  const here = join(path, op);
  switch (op) {
    case 'prefix':
    case 'suffix': {
      if (typeof arg === 'string') return { op, value: arg, ignoreCase: false };
      if (isPlainObject(arg) && Object.keys(arg).length === 1 && typeof arg['equals-ignore-case'] === 'string') {
        return { op, value: arg['equals-ignore-case'] as string, ignoreCase: true };
      }
      throw new InvalidPatternError(
        here,
        `${op} takes a string or {"equals-ignore-case": "<string>"}, got ${describe(arg)}`,
      );
    }
    case 'equals-ignore-case':
      if (typeof arg !== 'string')
        throw new InvalidPatternError(here, `equals-ignore-case takes a string, got ${describe(arg)}`);
      return { op, value: arg };
    case 'wildcard': {
      if (typeof arg !== 'string') throw new InvalidPatternError(here, `wildcard takes a string, got ${describe(arg)}`);
      return { op, wildcard: wildcardOrThrow(arg, here) };
    }
    case 'numeric':
      return { op, ...compileNumeric(arg, here) };
    case 'cidr': {
      if (typeof arg !== 'string')
        throw new InvalidPatternError(here, `cidr takes a string such as "10.0.0.0/24", got ${describe(arg)}`);
      const cidr = parseCidr(arg);
      if (typeof cidr === 'string') throw new InvalidPatternError(here, cidr);
      return { op, cidr };
    }
    case 'exists':
      if (typeof arg !== 'boolean')
        throw new InvalidPatternError(here, `exists must be true or false, got ${describe(arg)}`);
      return { op, value: arg };
    case 'anything-but':
      return { op, but: compileAnythingBut(arg, here) };
    default:
      throw new InvalidPatternError(
        path,
        `unrecognized match type "${op}" (expected one of prefix, suffix, equals-ignore-case, wildcard, anything-but, numeric, cidr, exists)`,
      );
  }
}

function wildcardOrThrow(source: string, path: string): Wildcard {
  const w = parseWildcard(source);
  if (typeof w === 'string') throw new InvalidPatternError(path, w);
  return w;
}

const LOWER_OPS = new Set(['>', '>=']);
const UPPER_OPS = new Set(['<', '<=']);

function compileNumeric(arg: Json, path: string): { lower?: Bound; upper?: Bound } {
  if (!Array.isArray(arg))
    throw new InvalidPatternError(path, `numeric takes an array such as [">", 0, "<=", 5], got ${describe(arg)}`);
  if (arg.length !== 2 && arg.length !== 4) {
    throw new InvalidPatternError(
      path,
      `numeric takes one or two (operator, number) pairs, got ${arg.length} elements`,
    );
  }
  let lower: Bound | undefined;
  let upper: Bound | undefined;
  for (let i = 0; i < arg.length; i += 2) {
    const op = arg[i];
    const n = arg[i + 1];
    if (typeof op !== 'string' || !['=', '<', '<=', '>', '>='].includes(op)) {
      throw new InvalidPatternError(
        `${path}[${i}]`,
        `unrecognized numeric operator ${describe(op)} (expected =, <, <=, > or >=)`,
      );
    }
    if (typeof n !== 'number' || !Number.isFinite(n)) {
      throw new InvalidPatternError(
        `${path}[${i + 1}]`,
        `the value after "${op}" must be a number, got ${describe(n)}`,
      );
    }
    if (Math.abs(n) > NUMERIC_LIMIT) {
      throw new InvalidPatternError(`${path}[${i + 1}]`, `numeric values must be between -5.0e9 and 5.0e9, got ${n}`);
    }
    if (op === '=') {
      if (arg.length !== 2)
        throw new InvalidPatternError(`${path}[${i}]`, '"=" cannot be combined with another numeric operator');
      return { lower: { value: n, inclusive: true }, upper: { value: n, inclusive: true } };
    }
    if (LOWER_OPS.has(op)) {
      if (lower) throw new InvalidPatternError(`${path}[${i}]`, 'only one lower bound (> or >=) is allowed');
      if (upper)
        throw new InvalidPatternError(
          `${path}[${i}]`,
          'a numeric range gives its lower bound (> or >=) first, then its upper bound (< or <=)',
        );
      lower = { value: n, inclusive: op === '>=' };
    } else if (UPPER_OPS.has(op)) {
      if (upper) throw new InvalidPatternError(`${path}[${i}]`, 'only one upper bound (< or <=) is allowed');
      upper = { value: n, inclusive: op === '<=' };
    }
  }
  if (lower && upper && !(lower.value < upper.value)) {
    throw new InvalidPatternError(
      path,
      `the lower bound (${lower.value}) must be less than the upper bound (${upper.value})`,
    );
  }
  return { lower, upper };
}

function compileAnythingBut(arg: Json, path: string): AnythingBut {
  if (typeof arg === 'string') return { kind: 'values', strings: new Set([arg]), numbers: [] };
  if (typeof arg === 'number') {
    if (!Number.isFinite(arg)) throw new InvalidPatternError(path, 'numbers must be finite');
    return { kind: 'values', strings: new Set(), numbers: [arg] };
  }
  if (Array.isArray(arg)) {
    if (arg.length === 0) throw new InvalidPatternError(path, 'anything-but list must not be empty');
    const allStrings = arg.every((x) => typeof x === 'string');
    const allNumbers = arg.every((x) => typeof x === 'number' && Number.isFinite(x));
    if (!allStrings && !allNumbers) {
      throw new InvalidPatternError(
        path,
        'anything-but list must hold only strings or only numbers (no null, booleans, objects or a mix)',
      );
    }
    return allStrings
      ? { kind: 'values', strings: new Set(arg as string[]), numbers: [] }
      : { kind: 'values', strings: new Set(), numbers: arg as number[] };
  }
  if (!isPlainObject(arg)) {
    throw new InvalidPatternError(
      path,
      `anything-but takes a string, a number, a list of either, or one of {prefix}, {suffix}, {equals-ignore-case}, {wildcard}; got ${describe(arg)}`,
    );
  }
  const keys = Object.keys(arg);
  if (keys.length !== 1) {
    throw new InvalidPatternError(
      path,
      `anything-but takes exactly one operator, got ${keys.length === 0 ? 'none' : keys.map((k) => `"${k}"`).join(', ')}`,
    );
  }
  const op = keys[0];
  const inner = arg[op];
  const here = join(path, op);
  const stringList = (what: string): string[] => {
    const list = typeof inner === 'string' ? [inner] : inner;
    if (!Array.isArray(list) || list.length === 0 || !list.every((x) => typeof x === 'string')) {
      throw new InvalidPatternError(
        here,
        `anything-but ${what} takes a string or a non-empty list of strings, got ${describe(inner)}`,
      );
    }
    return list as string[];
  };
  switch (op) {
    case 'prefix':
    case 'suffix': {
      const values = stringList(op);
      if (values.includes(''))
        throw new InvalidPatternError(here, `anything-but ${op} values must not be empty strings`);
      return { kind: op, values };
    }
    case 'equals-ignore-case':
      return { kind: op, values: stringList(op) };
    case 'wildcard':
      return {
        kind: op,
        wildcards: stringList(op).map((s, i) => wildcardOrThrow(s, Array.isArray(inner) ? `${here}[${i}]` : here)),
      };
    default:
      throw new InvalidPatternError(
        here,
        op === 'anything-but'
          ? 'anything-but cannot be nested'
          : `"${op}" is not supported inside anything-but (use prefix, suffix, equals-ignore-case or wildcard)`,
      );
  }
}
