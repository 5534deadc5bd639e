import {
  type AddressRange,
  addressRange,
  type CaseAlternatives,
  caseAlternatives,
  comparableNumber,
  javaSplit,
  parseCidr,
  parseWildcard,
  type Wildcard,
} from './pattern-values.ts';

/**
 * Validation and compilation of EventBridge event patterns, following event-ruler's JsonRuleCompiler (the
 * library EventBridge's pattern language comes from; test/dev/local/bus/pattern-judge.e2e.test.ts holds the two
 * to the same verdicts): a pattern becomes a list of sub-patterns, one per combination of `$or` alternatives,
 * each a map from a dotted field path ({"a": {"b": [...]}} and {"a.b": [...]} are the same path) to the list
 * of matchers any one of which the field's value must satisfy. A path given twice keeps its last list.
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

/** A JSON number with the text it was written as: event-ruler compares some numbers by their text. */
export class JsonNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * One matcher of a field's list. `exact` compares the value's text (`quoted` for strings); `number` and
 * `range` compare numbers that are doubles exactly; `address` compares IP addresses.
 */
export type ValueMatcher =
  | { op: 'exact'; quoted: boolean; text: string }
  | { op: 'number'; value: number }
  | { op: 'range'; lower: number; lowerOpen: boolean; upper: number; upperOpen: boolean }
  | { op: 'address'; range: AddressRange }
  | { op: 'prefix' | 'suffix'; value: string }
  | { op: 'prefix-ignore-case' | 'suffix-ignore-case' | 'equals-ignore-case'; alternatives: CaseAlternatives }
  | { op: 'wildcard'; wildcard: Wildcard }
  | { op: 'exists'; value: boolean }
  | { op: 'anything-but'; but: AnythingBut };

export type AnythingBut =
  | { kind: 'strings'; values: Set<string> }
  | { kind: 'numbers'; values: number[] }
  | { kind: 'prefix' | 'suffix'; values: string[] }
  | { kind: 'equals-ignore-case'; values: CaseAlternatives[] }
  | { kind: 'wildcard'; values: Wildcard[] };

export interface FieldCondition {
  /** The dotted path, as event-ruler names it. */
  path: string;
  matchers: ValueMatcher[];
}

export interface CompiledPattern {
  /** The event matches when any sub-pattern does. Each lists its fields in event-ruler's (sorted) order. */
  subPatterns: FieldCondition[][];
  /** Every step of every path: event keys made of other steps are skipped, as event-ruler does. */
  steps: Set<string>;
}

type Json = unknown;
type Branch = Map<string, ValueMatcher[]>;

const describe = (v: unknown): string =>
  v === null
    ? 'null'
    : v instanceof JsonNumber
      ? `number ${v.text}`
      : Array.isArray(v)
        ? 'an array'
        : typeof v === 'object'
          ? 'an object'
          : `${typeof v} ${JSON.stringify(v)}`;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);

const isNumber = (v: unknown): v is JsonNumber | number => v instanceof JsonNumber || typeof v === 'number';
const numberText = (v: JsonNumber | number): string => (v instanceof JsonNumber ? v.text : JSON.stringify(v));

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Operator names event-ruler reserves; they cannot be field names inside `$or` alternatives. */
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

/** Compiles a parsed pattern (numbers as JsonNumber or plain numbers); throws InvalidPatternError. */
export function compileObject(pattern: Json): CompiledPattern {
  if (!isPlainObject(pattern)) throw new InvalidPatternError('', `expected a JSON object, got ${describe(pattern)}`);
  const branches: Branch[] = [];
  parseObject(branches, [], pattern, '', false);
  const steps = new Set<string>();
  const subPatterns = branches.map((branch) => {
    const paths = [...branch.keys()].sort();
    for (const p of paths) for (const step of javaSplit(p, '.')) steps.add(step);
    return paths.map((path) => ({ path, matchers: branch.get(path)! }));
  });
  return { subPatterns, steps };
}

/** event-ruler's path of a field: its steps joined with dots, an empty parent adding no dot. */
function fieldPath(steps: string[], key: string): string {
  const base = steps.join('.');
  return base ? `${base}.${key}` : key;
}

function parseObject(
  branches: Branch[],
  steps: string[],
  obj: Record<string, unknown>,
  where: string,
  insideOr: boolean,
) {
  const keys = Object.keys(obj);
  if (keys.length === 0) throw new InvalidPatternError(where, 'empty objects are not allowed');
  for (const key of keys) {
    const value = obj[key];
    const here = join(where, key);
    if (key === '$or') {
      parseOr(branches, steps, value, here);
      continue;
    }
    if (insideOr && RESERVED_IN_OR.has(key)) {
      throw new InvalidPatternError(here, `"${key}" is a reserved operator name and cannot be a field name inside $or`);
    }
    if (isPlainObject(value)) {
      parseObject(branches, [...steps, key], value, here, insideOr);
    } else if (Array.isArray(value)) {
      const matchers = compileList(value, here);
      if (branches.length === 0) branches.push(new Map());
      const path = fieldPath(steps, key);
      for (const branch of branches) branch.set(path, matchers);
    } else {
      throw new InvalidPatternError(
        here,
        `match values must be in an array (e.g. [${JSON.stringify(value instanceof JsonNumber ? value.text : value)}]) or be a nested object, got ${describe(value)}`,
      );
    }
  }
}

/** `$or`: every branch so far is copied once per alternative, and the alternative's fields added to the copy. */
function parseOr(branches: Branch[], steps: string[], value: Json, where: string) {
  if (!Array.isArray(value) || value.length < 2) {
    throw new InvalidPatternError(where, '$or must be an array of at least 2 pattern objects');
  }
  const before = branches.splice(0);
  value.forEach((alt, i) => {
    if (!isPlainObject(alt))
      throw new InvalidPatternError(
        `${where}[${i}]`,
        `each $or alternative must be a pattern object, got ${describe(alt)}`,
      );
    const copies = before.length ? before.map((b) => new Map(b)) : [new Map()];
    parseObject(copies, steps, alt, `${where}[${i}]`, true);
    branches.push(...copies);
  });
}

function compileList(values: Json[], where: string): ValueMatcher[] {
  if (values.length === 0)
    throw new InvalidPatternError(where, 'empty arrays are not allowed: give at least one value to match');
  return values.flatMap((v, i) => compileValue(v, `${where}[${i}]`));
}

function compileValue(v: Json, where: string): ValueMatcher[] {
  if (typeof v === 'string') {
    // event-ruler compares an IP address literal as an address: 2001:db8::1 equals 2001:0db8:0:0:0:0:0:1.
    const range = addressRange(v);
    return [range ? { op: 'address', range } : { op: 'exact', quoted: true, text: v }];
  }
  if (v === null || typeof v === 'boolean') return [{ op: 'exact', quoted: false, text: String(v) }];
  if (isNumber(v)) {
    const text = numberText(v);
    const value = comparableNumber(text);
    // A number that is a double exactly also matches other spellings of it (300 and 3.0e2).
    const exact: ValueMatcher = { op: 'exact', quoted: false, text };
    return value === null ? [exact] : [{ op: 'number', value }, exact];
  }
  if (Array.isArray(v)) throw new InvalidPatternError(where, 'nested arrays are not allowed in a match list');
  if (!isPlainObject(v)) throw new InvalidPatternError(where, `unsupported match value ${describe(v)}`);
  const keys = Object.keys(v);
  if (keys.length !== 1) {
    throw new InvalidPatternError(
      where,
      keys.length === 0
        ? 'empty match object: give one operator such as {"prefix": "..."}'
        : `a match object holds exactly one operator, got ${keys.map((k) => `"${k}"`).join(', ')}`,
    );
  }
  const op = keys[0];
  const arg = v[op];
  const here = join(where, op);
  switch (op) {
    case 'exactly':
      if (typeof arg !== 'string') throw new InvalidPatternError(here, `exactly takes a string, got ${describe(arg)}`);
      return [{ op: 'exact', quoted: true, text: arg }];
    case 'prefix':
    case 'suffix': {
      if (typeof arg === 'string') return [{ op, value: arg }];
      if (isPlainObject(arg) && Object.keys(arg).length === 1 && typeof arg['equals-ignore-case'] === 'string') {
        return [{ op: `${op}-ignore-case`, alternatives: caseAlternatives(arg['equals-ignore-case']) }];
      }
      throw new InvalidPatternError(
        here,
        `${op} takes a string or {"equals-ignore-case": "<string>"}, got ${describe(arg)}`,
      );
    }
    case 'equals-ignore-case':
      if (typeof arg !== 'string')
        throw new InvalidPatternError(here, `equals-ignore-case takes a string, got ${describe(arg)}`);
      return [{ op, alternatives: caseAlternatives(arg) }];
    case 'wildcard':
      if (typeof arg !== 'string') throw new InvalidPatternError(here, `wildcard takes a string, got ${describe(arg)}`);
      return [{ op, wildcard: wildcardOrThrow(arg, here) }];
    case 'numeric':
      return [compileNumeric(arg, here)];
    case 'cidr': {
      if (typeof arg !== 'string')
        throw new InvalidPatternError(here, `cidr takes a string such as "10.0.0.0/24", got ${describe(arg)}`);
      const range = parseCidr(arg);
      if (typeof range === 'string') throw new InvalidPatternError(here, range);
      return [{ op: 'address', range }];
    }
    case 'exists':
      if (typeof arg !== 'boolean')
        throw new InvalidPatternError(here, `exists must be true or false, got ${describe(arg)}`);
      return [{ op, value: arg }];
    case 'anything-but':
      return [{ op, but: compileAnythingBut(arg, here) }];
    default:
      throw new InvalidPatternError(
        where,
        `unrecognized match type "${op}" (expected one of prefix, suffix, equals-ignore-case, wildcard, anything-but, numeric, cidr, exists, exactly)`,
      );
  }
}

function wildcardOrThrow(source: string, where: string): Wildcard {
  const w = parseWildcard(source);
  if (typeof w === 'string') throw new InvalidPatternError(where, w);
  return w;
}

/** A number event-ruler can compare, within EventBridge's numeric range. */
function boundValue(op: string, n: Json, where: string): number {
  if (!isNumber(n))
    throw new InvalidPatternError(where, `the value after "${op}" must be a number, got ${describe(n)}`);
  const value = comparableNumber(numberText(n));
  if (value === null) {
    throw new InvalidPatternError(
      where,
      `${numberText(n)} cannot be compared: it is not exactly a double-precision number`,
    );
  }
  if (Math.abs(value) > NUMERIC_LIMIT) {
    throw new InvalidPatternError(where, `numeric values must be between -5.0e9 and 5.0e9, got ${numberText(n)}`);
  }
  return value;
}

const LOWEST = -Number.MAX_VALUE;
const HIGHEST = Number.MAX_VALUE;

/** `numeric`: ["=", n], [">"|">=", n], ["<"|"<=", n], or a lower bound then an upper bound. */
function compileNumeric(arg: Json, where: string): ValueMatcher {
  if (!Array.isArray(arg))
    throw new InvalidPatternError(where, `numeric takes an array such as [">", 0, "<=", 5], got ${describe(arg)}`);
  const [op, n, op2, n2, ...rest] = arg;
  if (typeof op !== 'string' || !['=', '<', '<=', '>', '>='].includes(op)) {
    throw new InvalidPatternError(
      `${where}[0]`,
      `unrecognized numeric operator ${op === undefined ? '(none)' : describe(op)} (expected =, <, <=, > or >=)`,
    );
  }
  const value = boundValue(op, n, `${where}[1]`);
  const single = arg.length === 2;
  if (op === '=' || op === '<' || op === '<=') {
    if (!single) {
      throw new InvalidPatternError(
        `${where}[2]`,
        op === '='
          ? '"=" cannot be combined with another numeric operator'
          : 'a numeric range gives its lower bound (> or >=) first, then its upper bound (< or <=)',
      );
    }
    if (op === '=') return { op: 'number', value };
    return { op: 'range', lower: LOWEST, lowerOpen: false, upper: value, upperOpen: op === '<' };
  }
  if (single) return { op: 'range', lower: value, lowerOpen: op === '>', upper: HIGHEST, upperOpen: false };
  if (op2 !== '<' && op2 !== '<=') {
    throw new InvalidPatternError(
      `${where}[2]`,
      `a numeric range takes an upper bound (< or <=) after its lower bound, got ${op2 === undefined ? 'nothing' : describe(op2)}`,
    );
  }
  const upper = boundValue(op2, n2, `${where}[3]`);
  if (rest.length) throw new InvalidPatternError(where, 'numeric takes one or two (operator, number) pairs');
  if (!(value < upper)) {
    throw new InvalidPatternError(where, `the lower bound (${value}) must be less than the upper bound (${upper})`);
  }
  return { op: 'range', lower: value, lowerOpen: op === '>', upper, upperOpen: op2 === '<' };
}

function compileAnythingBut(arg: Json, where: string): AnythingBut {
  if (isPlainObject(arg)) return compileAnythingButOperator(arg, where);
  const list = Array.isArray(arg) ? arg : [arg];
  if (!list.every((x) => typeof x === 'string' || isNumber(x))) {
    throw new InvalidPatternError(
      where,
      Array.isArray(arg)
        ? 'anything-but list must hold only strings or only numbers (no null, booleans, objects or arrays)'
        : `anything-but takes a string, a number, a list of either, or one of {prefix}, {suffix}, {equals-ignore-case}, {wildcard}; got ${describe(arg)}`,
    );
  }
  if (list.length === 0) throw new InvalidPatternError(where, 'anything-but list must not be empty');
  const numbers = list.filter(isNumber);
  if (numbers.length === 0) return { kind: 'strings', values: new Set(list as string[]) };
  if (numbers.length !== list.length)
    throw new InvalidPatternError(where, 'anything-but list must hold only strings or only numbers, not both');
  return {
    kind: 'numbers',
    values: numbers.map((n) => {
      const value = comparableNumber(numberText(n));
      if (value === null)
        throw new InvalidPatternError(
          where,
          `${numberText(n)} cannot be compared: it is not exactly a double-precision number`,
        );
      return value;
    }),
  };
}

function compileAnythingButOperator(arg: Record<string, unknown>, where: string): AnythingBut {
  const keys = Object.keys(arg);
  if (keys.length !== 1) {
    throw new InvalidPatternError(
      where,
      `anything-but takes exactly one operator, got ${keys.length === 0 ? 'none' : keys.map((k) => `"${k}"`).join(', ')}`,
    );
  }
  const op = keys[0];
  const inner = arg[op];
  const here = join(where, op);
  if (op !== 'prefix' && op !== 'suffix' && op !== 'equals-ignore-case' && op !== 'wildcard') {
    throw new InvalidPatternError(
      here,
      op === 'anything-but'
        ? 'anything-but cannot be nested'
        : `"${op}" is not supported inside anything-but (use prefix, suffix, equals-ignore-case or wildcard)`,
    );
  }
  const list = typeof inner === 'string' ? [inner] : inner;
  if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
    throw new InvalidPatternError(
      here,
      `anything-but ${op} takes a string or a list of strings, got ${describe(inner)}`,
    );
  }
  // event-ruler 2.1.0 accepts an empty list here, then throws on every event holding the field.
  if (list.length === 0) throw new InvalidPatternError(here, `anything-but ${op} must not be an empty list`);
  const values = list as string[];
  switch (op) {
    case 'prefix':
    case 'suffix':
      if (values.includes(''))
        throw new InvalidPatternError(here, `anything-but ${op} values must not be empty strings`);
      return { kind: op, values };
    case 'equals-ignore-case':
      return { kind: op, values: values.map(caseAlternatives) };
    case 'wildcard':
      return {
        kind: op,
        values: values.map((s, i) => wildcardOrThrow(s, Array.isArray(inner) ? `${here}[${i}]` : here)),
      };
  }
}
