import { JsonLimitError, jsonTextDepth, MAX_JSON_DEPTH, valueDepthExceeds } from '../../../shared/bounded-json.ts';
import {
  type AnythingBut,
  type CompiledPattern,
  compileObject,
  type FieldCondition,
  InvalidPatternError,
  JsonNumber,
  type ValueMatcher,
} from './pattern-compile.ts';
import {
  comparableNumber,
  endsIgnoringCase,
  equalsIgnoringCase,
  inAddressRange,
  ipHex,
  javaSplit,
  startsIgnoringCase,
  wildcardMatches,
} from './pattern-values.ts';

export type { CompiledPattern } from './pattern-compile.ts';
export { InvalidPatternError, JsonNumber } from './pattern-compile.ts';

/**
 * EventBridge event-pattern matching, the way event-ruler (the library EventBridge's pattern language comes
 * from) does it; test/dev/local/bus/pattern-judge.e2e.test.ts holds the two to the same answers on thousands of
 * generated cases. In short:
 * - the event is read as leaf fields named by their dotted path ({"a": {"b": 1}} and {"a.b": 1} both hold
 *   a.b = 1); array elements are fields of the array's path, and objects and empty arrays hold no value;
 * - a pattern is one or more sub-patterns (one per combination of `$or` alternatives); the event matches if
 *   for one of them every field has a value satisfying one of its matchers, the values chosen all from the
 *   same element of any array they share (fields of one object inside an array belong together); the fields
 *   are checked in sorted path order, and `exists: false` means no value at that path consistent with the
 *   elements chosen so far;
 * - strings compare exactly; numbers that are doubles exactly compare by value (300 matches 3.0e2), other
 *   numbers by their text; IP address literals compare as addresses; `anything-but` needs the field present.
 */

/** Validates `pattern` (an object, or its JSON text) and compiles it; throws InvalidPatternError naming the path. */
export function compilePattern(pattern: unknown): CompiledPattern {
  let value = pattern;
  // compileObject recurses once per level: the depth is checked first, without recursion.
  if (typeof pattern === 'string') {
    try {
      value = parseJsonKeepingNumbers(pattern);
    } catch (err) {
      throw new InvalidPatternError('', (err as Error).message);
    }
  } else if (valueDepthExceeds(pattern, MAX_JSON_DEPTH)) {
    throw new InvalidPatternError('', `nested deeper than ${MAX_JSON_DEPTH} levels (the limit is ${MAX_JSON_DEPTH})`);
  }
  return compileObject(value);
}

/**
 * JSON.parse, bounded in depth, that keeps every number as a JsonNumber holding the text it was written as
 * (event-ruler compares 20-digit integers and other numbers that are not exactly a double by their text).
 * Like event-ruler, it reads the first object or array of the text and ignores what follows it.
 */
export function parseJsonKeepingNumbers(source: string): unknown {
  if (jsonTextDepth(source, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new JsonLimitError(
      'too-deep',
      `nested deeper than ${MAX_JSON_DEPTH} levels (the limit is ${MAX_JSON_DEPTH})`,
      MAX_JSON_DEPTH,
    );
  }
  const text = source.slice(0, firstValueEnd(source));
  const keepNumber = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? new JsonNumber(context.source) : value;
  try {
    return JSON.parse(text, keepNumber as (key: string, value: unknown) => unknown);
  } catch (err) {
    throw new JsonLimitError('invalid', `not valid JSON (${(err as Error).message})`);
  }
}

/** Where the first object or array of the text ends (string-aware bracket count); the text's length otherwise. */
function firstValueEnd(text: string): number {
  const start = text.search(/\S/);
  if (start < 0 || (text[start] !== '{' && text[start] !== '[')) return text.length;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
  }
  return text.length;
}

/**
 * True when `event` matches the compiled pattern. The event is a parsed JSON object; numbers in it may be
 * JsonNumber (parseJsonKeepingNumbers) to be compared as event-ruler compares the text it was sent.
 */
export function matches(compiled: CompiledPattern, event: unknown): boolean {
  if (!isPlainObject(event)) return false;
  const fields = flattenEvent(event, compiled.steps);
  return compiled.subPatterns.some((sub) => matchFrom(sub, 0, fields, new Map()));
}

/** Convenience for one-off checks (the TestEventPattern API, the CLI): compiles and matches; JSON text is read keeping numbers' text. */
export function testEventPattern(pattern: unknown, event: unknown): boolean {
  return matches(compilePattern(pattern), typeof event === 'string' ? parseJsonKeepingNumbers(event) : event);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);

/** One leaf of the event: its value's text (`quoted` for strings) and the array elements it lies in. */
interface EventValue {
  quoted: boolean;
  text: string;
  /** Array number (in reading order) → element index, for every array whose element is an object or array. */
  elements: Map<number, number>;
}

/**
 * The event's leaf values by dotted path. A key is skipped with everything under it unless the pattern uses
 * it as a step, or it is made of such steps joined by dots (event-ruler's rule, quirks included).
 */
function flattenEvent(event: Record<string, unknown>, steps: Set<string>): Map<string, EventValue[]> {
  const fields = new Map<string, EventValue[]>();
  const used = (key: string) => steps.has(key) || (key.includes('.') && javaSplit(key, '.').every((s) => steps.has(s)));
  let arrays = 0;
  const add = (path: string[], v: unknown, elements: Map<number, number>) => {
    const name = path.join('.');
    const value: EventValue =
      typeof v === 'string'
        ? { quoted: true, text: v, elements }
        : { quoted: false, text: v instanceof JsonNumber ? v.text : JSON.stringify(v), elements };
    const list = fields.get(name);
    if (list) list.push(value);
    else fields.set(name, [value]);
  };
  const visit = (v: unknown, path: string[], elements: Map<number, number>): void => {
    if (Array.isArray(v)) {
      const id = arrays++;
      v.forEach((element, index) => {
        if (typeof element === 'object' && element !== null && !(element instanceof JsonNumber)) {
          visit(element, path, new Map(elements).set(id, index));
        } else {
          add(path, element, elements);
        }
      });
    } else if (isPlainObject(v)) {
      for (const [key, child] of Object.entries(v)) if (used(key)) visit(child, [...path, key], elements);
    } else {
      add(path, v, elements);
    }
  };
  visit(event, [], new Map());
  return fields;
}

/** The elements chosen so far joined with the value's, or null when they name different elements of an array. */
function consistent(chosen: Map<number, number>, value: EventValue): Map<number, number> | null {
  let merged: Map<number, number> | null = null;
  for (const [array, index] of value.elements) {
    const had = chosen.get(array);
    if (had === undefined) {
      merged ??= new Map(chosen);
      merged.set(array, index);
    } else if (had !== index) return null;
  }
  return merged ?? chosen;
}

function matchFrom(
  sub: FieldCondition[],
  i: number,
  fields: Map<string, EventValue[]>,
  chosen: Map<number, number>,
): boolean {
  if (i === sub.length) return true;
  const { path, matchers } = sub[i];
  const values = fields.get(path) ?? [];
  if (matchers.some((m) => m.op === 'exists' && !m.value)) {
    if (!values.some((v) => consistent(chosen, v) !== null) && matchFrom(sub, i + 1, fields, chosen)) return true;
  }
  for (const v of values) {
    const merged = consistent(chosen, v);
    if (merged !== null && valueMatches(matchers, v) && matchFrom(sub, i + 1, fields, merged)) return true;
  }
  return false;
}

/**
 * Whether any matcher of a field's list accepts one value. Like event-ruler, a number that is a double
 * exactly is compared only by number when the list compares numbers; other values by their text; and a
 * string holding an IP address also as an address.
 */
function valueMatches(matchers: ValueMatcher[], v: EventValue): boolean {
  const comparesNumbers = matchers.some(
    (m) => m.op === 'number' || m.op === 'range' || (m.op === 'anything-but' && m.but.kind === 'numbers'),
  );
  const number = !v.quoted && comparesNumbers ? comparableNumber(v.text) : null;
  const address = v.quoted ? ipHex(v.text) : null;
  return matchers.some((m) => {
    if (m.op === 'exists') return m.value;
    if (m.op === 'address') {
      // Also the bare text of a value that is not a string (hex-digit number text): event-ruler's quirk, kept.
      return (
        (address !== null && inAddressRange(m.range, address)) ||
        (number === null && !v.quoted && inAddressRange(m.range, v.text))
      );
    }
    if (number !== null) return numberMatches(m, number);
    return textMatches(m, v);
  });
}

function numberMatches(m: ValueMatcher, n: number): boolean {
  switch (m.op) {
    case 'number':
      return n === m.value;
    case 'range':
      return (m.lowerOpen ? n > m.lower : n >= m.lower) && (m.upperOpen ? n < m.upper : n <= m.upper);
    case 'anything-but':
      return !(m.but.kind === 'numbers' && m.but.values.includes(n));
    default:
      return false;
  }
}

function textMatches(m: ValueMatcher, v: EventValue): boolean {
  const s = v.text;
  switch (m.op) {
    case 'exact':
      return m.quoted === v.quoted && m.text === s;
    case 'prefix':
      return v.quoted && s.startsWith(m.value);
    case 'suffix':
      return v.quoted && s.endsWith(m.value);
    case 'prefix-ignore-case':
      return v.quoted && startsIgnoringCase(m.alternatives, s);
    case 'suffix-ignore-case':
      return v.quoted && endsIgnoringCase(m.alternatives, s);
    case 'equals-ignore-case':
      return v.quoted && equalsIgnoringCase(m.alternatives, s);
    case 'wildcard':
      return v.quoted && wildcardMatches(m.wildcard, s);
    case 'anything-but':
      return !(v.quoted && excludedBy(m.but, s));
    default:
      return false;
  }
}

/** Whether a string value is one an anything-but excludes (numbers and other values are never excluded by text). */
function excludedBy(but: AnythingBut, s: string): boolean {
  switch (but.kind) {
    case 'strings':
      return but.values.has(s);
    case 'numbers':
      return false;
    case 'prefix':
      return but.values.some((p) => s.startsWith(p));
    case 'suffix':
      return but.values.some((p) => s.endsWith(p));
    case 'equals-ignore-case':
      return but.values.some((alts) => equalsIgnoringCase(alts, s));
    case 'wildcard':
      return but.values.some((w) => wildcardMatches(w, s));
  }
}
