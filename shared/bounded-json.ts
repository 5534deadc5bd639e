/**
 * Bounded JSON: parse and serialise with a limit on size and nesting depth, without recursion.
 *
 * Why: V8's JSON.parse is iterative and happily builds a value nested 10,000 deep, but everything that walks
 * it afterwards recurses (JSON.stringify, structuredClone, the pattern compiler, zod) and overflows the
 * stack. So untrusted JSON text is checked before it is parsed, and values that reach a serialiser are
 * checked before they are serialised. Every place that takes JSON from outside (the local bus's PutEvents
 * and TestEventPattern, its dead-letter store, `spiritctl events test-pattern`, the pattern compiler) uses
 * this one module.
 *
 * Why our own code: no installed, well-kept npm package does this (secure-json-parse and bourne guard
 * against prototype poisoning, not depth; safe-stable-stringify has `maximumDepth` but only for
 * serialising, is not a direct dependency, and truncates silently instead of refusing). The checks are a
 * linear character scan and an explicit-stack walk, a few dozen lines.
 *
 * The depth bound: a change notice or any event this project puts on the bus is about 4 levels deep
 * (envelope → detail → object → list), a rule pattern about 3-5. 64 leaves 10× headroom for any real
 * event, while staying far below the ~2,000-10,000 levels at which recursive walkers overflow.
 */

/** Nesting depth bound for JSON from outside: `{}` and `[]` are depth 1, `{"a":[1]}` depth 2. */
export const MAX_JSON_DEPTH = 64;

export type JsonLimitKind = 'too-large' | 'too-deep' | 'invalid';

/** JSON refused by a bound (or not JSON at all); `message` never names the field, callers prefix it. */
export class JsonLimitError extends Error {
  readonly kind: JsonLimitKind;
  readonly limit: number | null;
  constructor(kind: JsonLimitKind, message: string, limit: number | null = null) {
    super(message);
    this.name = 'JsonLimitError';
    this.kind = kind;
    this.limit = limit;
  }
}

export interface JsonLimits {
  /** Default MAX_JSON_DEPTH. */
  maxDepth?: number;
  /** UTF-8 bytes; default no size bound (the caller may already bound it, e.g. an HTTP body). */
  maxBytes?: number;
}

const tooDeep = (maxDepth: number) =>
  new JsonLimitError('too-deep', `nested deeper than ${maxDepth} levels (the limit is ${maxDepth})`, maxDepth);
const tooLarge = (maxBytes: number) =>
  new JsonLimitError('too-large', `over ${maxBytes} bytes (the limit is ${maxBytes})`, maxBytes);

/**
 * Greatest nesting depth of JSON text, by one pass over its characters (brackets inside strings do not
 * count); stops early once it passes `stopAbove`. Exact for valid JSON; invalid JSON is for JSON.parse to refuse.
 */
export function jsonTextDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) {
        max = depth;
        if (max > stopAbove) return max;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return max;
}

/** JSON.parse with the size and depth checked first; throws JsonLimitError (kind `invalid` for bad JSON). */
export function parseBoundedJson(text: string, limits: JsonLimits = {}): unknown {
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  if (
    limits.maxBytes !== undefined &&
    (text.length > limits.maxBytes || Buffer.byteLength(text, 'utf8') > limits.maxBytes)
  ) {
    throw tooLarge(limits.maxBytes);
  }
  if (jsonTextDepth(text, maxDepth) > maxDepth) throw tooDeep(maxDepth);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new JsonLimitError('invalid', `not valid JSON (${(err as Error).message})`);
  }
}

/** Visits at most this many containers in valueDepthExceeds: a bound on time even for shared or cyclic references. */
const MAX_NODES = 1_000_000;

/**
 * Whether an already-built value nests deeper than `maxDepth` (same counting as jsonTextDepth), walked with
 * an explicit stack. A value with more than a million containers, or a cycle, counts as exceeding.
 */
export function valueDepthExceeds(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  let visited = 0;
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > maxDepth || ++visited > MAX_NODES) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** JSON.stringify that refuses (throws JsonLimitError) instead of overflowing or producing an unbounded string. */
export function stringifyBounded(value: unknown, limits: JsonLimits = {}): string {
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  if (valueDepthExceeds(value, maxDepth)) throw tooDeep(maxDepth);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new JsonLimitError('invalid', `cannot be serialised as JSON (${(err as Error).message})`);
  }
  if (text === undefined) throw new JsonLimitError('invalid', 'cannot be serialised as JSON');
  if (limits.maxBytes !== undefined && Buffer.byteLength(text, 'utf8') > limits.maxBytes)
    throw tooLarge(limits.maxBytes);
  return text;
}
