import {
  type AnythingBut,
  type CompiledPattern,
  compileObject,
  InvalidPatternError,
  type PatternNode,
  type ValueMatcher,
} from './pattern-compile.ts';
import { cidrContains, wildcardMatches } from './pattern-values.ts';
import { MAX_JSON_DEPTH, parseBoundedJson, valueDepthExceeds } from '../../../shared/bounded-json.ts';

export { InvalidPatternError } from './pattern-compile.ts';
export type { CompiledPattern } from './pattern-compile.ts';

/**
 * EventBridge event-pattern matching.
 *
 * Semantics (EventBridge user guide: "Event patterns", "Arrays in event patterns", "Matching null values
 * and empty strings", "Content filtering"):
 * - every field named in the pattern must match (and); a list of values matches if any value matches (or);
 * - when the event value is an array, the field matches if any element matches; arrays of objects are
 *   tried element by element, so two fields of one nested pattern must come from the same element;
 * - strings compare exactly, null only matches null, "" only matches "";
 * - `exists` looks at leaf values only: a field holding an object does not "exist" for `exists: true`
 *   and satisfies `exists: false`;
 * - `anything-but` needs the field to be present;
 * - numbers compare by value (Event Ruler adds a numeric-equals matcher to every number in a pattern, so
 *   300 matches 3.0e2), and IP address literals compare as addresses.
 */

/** Validates `pattern` (an object or its JSON text) and compiles it; throws InvalidPatternError naming the path. */
export function compilePattern(pattern: unknown): CompiledPattern {
  let value = pattern;
  // compileObject recurses once per level: the depth is checked first, without recursion.
  if (typeof pattern === 'string') {
    try {
      value = parseBoundedJson(pattern, { maxDepth: MAX_JSON_DEPTH });
    } catch (err) {
      throw new InvalidPatternError('', (err as Error).message);
    }
  } else if (valueDepthExceeds(pattern, MAX_JSON_DEPTH)) {
    throw new InvalidPatternError('', `nested deeper than ${MAX_JSON_DEPTH} levels (the limit is ${MAX_JSON_DEPTH})`);
  }
  return compileObject(value, '');
}

/** True when `event` (a parsed JSON object) matches the compiled pattern. */
export function matches(compiled: CompiledPattern, event: unknown): boolean {
  return matchObject(compiled, event);
}

/** Convenience for one-off checks (the TestEventPattern API, the CLI): compiles and matches. */
export function testEventPattern(pattern: unknown, event: unknown): boolean {
  return matches(compilePattern(pattern), event);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function matchObject(p: CompiledPattern, obj: unknown): boolean {
  const fields = isPlainObject(obj) ? obj : undefined;
  for (const { key, node } of p.fields) {
    const value = fields && Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (!matchNode(node, value)) return false;
  }
  return p.ors.every((alternatives) => alternatives.some((alt) => matchObject(alt, obj)));
}

function matchNode(node: PatternNode, value: unknown): boolean {
  if (node.type === 'object') {
    if (!Array.isArray(value)) return matchObject(node.pattern, value);
    const elements = flatten(value);
    // An empty array holds no fields: a nested pattern of only `exists: false` still matches it.
    if (elements.length === 0) return matchObject(node.pattern, undefined);
    return elements.some((e) => matchObject(node.pattern, e));
  }
  const leaves = leafValues(value);
  return node.matchers.some((m) => matchLeaf(m, leaves));
}

function flatten(values: unknown[]): unknown[] {
  return values.flatMap((v) => (Array.isArray(v) ? flatten(v) : [v]));
}

/** The scalar values at a field: none when absent or an object, the elements when an array. */
function leafValues(value: unknown): unknown[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return flatten(value).filter((v) => !isPlainObject(v));
  if (isPlainObject(value)) return [];
  return [value];
}

function matchLeaf(m: ValueMatcher, leaves: unknown[]): boolean {
  if (m.op === 'exists') return m.value ? leaves.length > 0 : leaves.length === 0;
  return leaves.some((v) => matchScalar(m, v));
}

function matchScalar(m: ValueMatcher, v: unknown): boolean {
  switch (m.op) {
    case 'exact':
      return v === m.value || (m.ip !== undefined && typeof v === 'string' && cidrContains(m.ip, v));
    case 'prefix':
      return typeof v === 'string' && (m.ignoreCase ? lower(v).startsWith(lower(m.value)) : v.startsWith(m.value));
    case 'suffix':
      return typeof v === 'string' && (m.ignoreCase ? lower(v).endsWith(lower(m.value)) : v.endsWith(m.value));
    case 'equals-ignore-case':
      return typeof v === 'string' && lower(v) === lower(m.value);
    case 'wildcard':
      return typeof v === 'string' && wildcardMatches(m.wildcard, v);
    case 'numeric':
      return (
        typeof v === 'number' &&
        (!m.lower || (m.lower.inclusive ? v >= m.lower.value : v > m.lower.value)) &&
        (!m.upper || (m.upper.inclusive ? v <= m.upper.value : v < m.upper.value))
      );
    case 'cidr':
      return typeof v === 'string' && cidrContains(m.cidr, v);
    case 'anything-but':
      return !excludedBy(m.but, v);
    case 'exists':
      return true;
  }
}

/** Whether `v` is one of the values an anything-but excludes. String operators never exclude non-strings. */
function excludedBy(but: AnythingBut, v: unknown): boolean {
  switch (but.kind) {
    case 'values':
      return typeof v === 'string' ? but.strings.has(v) : typeof v === 'number' && but.numbers.includes(v);
    case 'prefix':
      return typeof v === 'string' && but.values.some((p) => v.startsWith(p));
    case 'suffix':
      return typeof v === 'string' && but.values.some((p) => v.endsWith(p));
    case 'equals-ignore-case':
      return typeof v === 'string' && but.values.some((x) => lower(x) === lower(v));
    case 'wildcard':
      return typeof v === 'string' && but.wildcards.some((w) => wildcardMatches(w, v));
  }
}

// Locale-independent lower-casing, like the Java toLowerCase(Locale.ROOT) EventBridge's matcher uses.
function lower(s: string): string {
  return s.toLowerCase();
}
