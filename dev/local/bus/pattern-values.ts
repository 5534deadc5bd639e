import { isIPv6 } from 'node:net';

/**
 * Value-level pieces of EventBridge pattern matching, each written to agree with event-ruler (the library
 * EventBridge's pattern language comes from; test/dev/local/bus/pattern-judge.e2e.test.ts compares the two on
 * thousands of generated cases): wildcards, IP addresses and CIDR blocks, numbers, case-insensitive comparison.
 */

/** A compiled `wildcard` value: literal segments separated by `*`. */
export interface Wildcard {
  source: string;
  segments: string[];
}

/**
 * Parses an EventBridge wildcard value. `*` matches any run of characters (including none); `\*` is a
 * literal asterisk and `\\` a literal backslash; any other escape and two consecutive `*` are rejected,
 * as EventBridge does. Returns an error message instead of throwing so the caller can name the path.
 */
export function parseWildcard(source: string): Wildcard | string {
  const segments: string[] = [''];
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      const next = source[i + 1];
      if (next !== '*' && next !== '\\') {
        return `a backslash may only escape "*" or "\\" (position ${i})`;
      }
      segments[segments.length - 1] += next;
      i++;
    } else if (ch === '*') {
      if (source[i + 1] === '*') return `consecutive wildcard characters are not allowed (position ${i})`;
      segments.push('');
    } else {
      segments[segments.length - 1] += ch;
    }
  }
  return { source, segments };
}

/**
 * Glob match without regular expressions: the first segment anchors the start, the last the end, and the
 * middle ones are found left to right. Greedy-leftmost is correct for `*`-only globs and runs in linear
 * time, so a hostile pattern cannot make matching slow.
 */
export function wildcardMatches(w: Wildcard, value: string): boolean {
  const { segments } = w;
  if (segments.length === 1) return value === segments[0];
  const first = segments[0];
  const last = segments[segments.length - 1];
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  let pos = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < segments.length - 1; i++) {
    const found = value.indexOf(segments[i], pos);
    if (found < 0 || found + segments[i].length > end) return false;
    pos = found + segments[i].length;
  }
  return true;
}

// ---- IP addresses -------------------------------------------------------------------------------------------

const IPV4_SHAPE = /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/;
const IPV6_SHAPE = /^[0-9a-fA-F:]*:[0-9a-fA-F:]*$/;

/**
 * A range of addresses as event-ruler keeps one: fixed-length upper-case hex digits (8 for IPv4, 32 for IPv6)
 * at each end, each end open or closed.
 */
export interface AddressRange {
  bottom: string;
  top: string;
  openBottom: boolean;
  openTop: boolean;
}

function hex(bytes: number[]): string {
  return bytes.map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join('');
}

/**
 * The bytes of an IP address literal, as event-ruler reads one (Java's InetAddress on strings shaped like an
 * address): IPv4 as four decimal parts (leading zeros allowed, at most 15 characters); IPv6 in hex-and-colon
 * form, where an IPv4-mapped address (::ffff:a00:1) becomes its IPv4 address. Dotted IPv6 forms
 * (::ffff:10.0.0.1) and anything else are not addresses.
 */
export function ipBytes(text: string): number[] | null {
  if (IPV4_SHAPE.test(text)) {
    if (text.length > 15) return null;
    const parts = text.split('.').map(Number);
    return parts.every((p) => p <= 255) ? parts : null;
  }
  if (!IPV6_SHAPE.test(text) || !isIPv6(text)) return null;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const front = groups(head);
  const back = groups(tail);
  const words = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

/** Upper-case hex of an address literal, or null when `text` is not one. */
export function ipHex(text: string): string | null {
  const bytes = ipBytes(text);
  return bytes ? hex(bytes) : null;
}

const HEX_DIGITS = '0123456789ABCDEF';

/** A single address as a range (event-ruler compares IP literals in a pattern as addresses), built as it does. */
export function addressRange(text: string): AddressRange | null {
  const digits = ipHex(text);
  if (digits === null) return null;
  const head = digits.slice(0, -1);
  const last = HEX_DIGITS.indexOf(digits[digits.length - 1]);
  return last === 15
    ? { bottom: head + HEX_DIGITS[14], openBottom: true, top: digits, openTop: false }
    : { bottom: digits, openBottom: false, top: head + HEX_DIGITS[last + 1], openTop: true };
}

/**
 * Parses a `cidr` value such as `10.0.0.0/24` or `2001:db8::/32`; returns an error message when event-ruler
 * refuses it. Host bits set in the address are ignored (10.0.0.5/24 is 10.0.0.0/24); a single address
 * (/32, /128) is refused: it is written as a plain value.
 */
export function parseCidr(source: string): AddressRange | string {
  const parts = javaSplit(source, '/');
  if (parts.length !== 2) return `"${source}" is not a CIDR block (expected address/prefix-length, e.g. 10.0.0.0/24)`;
  const [address, lengthText] = parts;
  if (!/^[+-]?\d{1,9}$/.test(lengthText)) return `prefix length "${lengthText}" must be a whole number`;
  const bits = Number(lengthText);
  if (bits < 0) return `prefix length "${lengthText}" must not be negative`;
  const bytes = ipBytes(address);
  if (!bytes) return `"${address}" is not an IPv4 or IPv6 address`;
  const max = bytes.length === 4 ? 31 : 127;
  if (bits > max) return `prefix length ${lengthText} must be from 0 to ${max}`;
  const low: number[] = [];
  const high: number[] = [];
  bytes.forEach((b, i) => {
    const fixed = Math.max(0, Math.min(8, bits - 8 * i));
    const mask = (0xff << (8 - fixed)) & 0xff;
    low.push(b & mask);
    high.push((b & mask) | (~mask & 0xff));
  });
  return { bottom: hex(low), openBottom: false, top: hex(high), openTop: false };
}

/**
 * Whether `value` falls in the range, read the way event-ruler's byte machine reads it: digit by digit, and
 * matched as soon as a digit puts it strictly inside (so a value of another length, an IPv6 address against
 * an IPv4 block, or the text of a number, may match on its first digits: 0.0.0.0/0 takes any value that starts
 * with a hex digit). Only upper-case hex digits are digits.
 */
export function inAddressRange(range: AddressRange, value: string): boolean {
  const digit = (i: number) => (i < value.length ? HEX_DIGITS.indexOf(value[i]) : -1);
  const bottom = [...range.bottom].map((c) => HEX_DIGITS.indexOf(c));
  const top = [...range.top].map((c) => HEX_DIGITS.indexOf(c));
  const last = bottom.length - 1;
  let fork = 0;
  while (bottom[fork] === top[fork]) {
    if (digit(fork) !== bottom[fork]) return false;
    fork++;
  }
  const d = digit(fork);
  if (d < 0) return false;
  if (d > bottom[fork] && d < top[fork]) return true;
  if (fork === last) return (d === bottom[fork] && !range.openBottom) || (d === top[fork] && !range.openTop);
  if (d === bottom[fork]) return followEdge(bottom, fork, range.openBottom, 15, digit, (x, b) => x > b);
  if (d === top[fork]) return followEdge(top, fork, range.openTop, 0, digit, (x, t) => x < t);
  return false;
}

/**
 * After the fork, along one end of the range: a digit beyond the end's digit (above the bottom, below the top)
 * is a match, an equal one goes on. Runs of the extreme digit (F after the bottom, 0 after the top) only go on
 * when a later digit, or a closed last digit, needs them.
 */
function followEdge(
  edge: number[],
  fork: number,
  open: boolean,
  extreme: number,
  digit: (i: number) => number,
  beyond: (x: number, e: number) => boolean,
): boolean {
  const last = edge.length - 1;
  const lastNeeded = edge[last] !== extreme || !open;
  let pathEnd = fork;
  for (let o = fork + 1; o < last; o++) if (edge[o] !== extreme) pathEnd = o;
  if (lastNeeded) pathEnd = last;
  for (let o = fork + 1; o <= last; o++) {
    const x = digit(o);
    if (x < 0) return false;
    if (o === last) return (x === edge[o] && !open) || beyond(x, edge[o]);
    if (edge[o] !== extreme && beyond(x, edge[o])) return true;
    if (x !== edge[o] || o >= pathEnd) return false;
  }
  return false;
}

// ---- numbers ------------------------------------------------------------------------------------------------

function decimalParts(text: string): { negative: boolean; digits: string; exponent: number } | null {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return null;
  let digits = (m[2] + (m[3] ?? '')).replace(/^0+/, '');
  let exponent = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return digits === '' ? { negative: false, digits: '0', exponent: 0 } : { negative: m[1] === '-', digits, exponent };
}

/**
 * The value event-ruler compares a JSON number by, or null when it compares it by its text only: the number
 * must be a double exactly (3.0e2 is 300; 0.10000000000000000001 and 20-digit integers are not, nor is
 * anything beyond the double range). Zero is always +0.
 */
export function comparableNumber(text: string): number | null {
  const value = Number(text);
  if (!Number.isFinite(value)) return null;
  const given = decimalParts(text);
  const exact = decimalParts(String(value));
  if (!given || !exact) return null;
  const same = given.negative === exact.negative && given.digits === exact.digits && given.exponent === exact.exponent;
  return same ? value + 0 : null;
}

// ---- case-insensitive comparison ----------------------------------------------------------------------------

/**
 * A case-insensitive pattern as event-ruler builds one: for every UTF-16 unit of the pattern, its lower-case
 * and upper-case forms (so "ß" also matches "SS"); a lone surrogate half, which Java writes to UTF-8 as "?",
 * matches "?" (so a pattern character outside the BMP only matches "??").
 */
export type CaseAlternatives = string[][];

export function caseAlternatives(pattern: string): CaseAlternatives {
  const out: string[][] = [];
  for (let i = 0; i < pattern.length; i++) {
    const unit = pattern[i];
    const code = unit.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdfff) {
      out.push(['?']);
      continue;
    }
    const lower = unit.toLowerCase();
    const upper = unit.toUpperCase();
    out.push(lower === upper ? [lower] : [lower, upper]);
  }
  return out;
}

/** Positions in `value` where the alternatives, read left to right from `start`, can end. */
function ends(alts: CaseAlternatives, value: string, start: number): Set<number> {
  let positions = new Set([start]);
  for (const choices of alts) {
    const next = new Set<number>();
    for (const p of positions) for (const c of choices) if (value.startsWith(c, p)) next.add(p + c.length);
    if (next.size === 0) return next;
    positions = next;
  }
  return positions;
}

export function equalsIgnoringCase(alts: CaseAlternatives, value: string): boolean {
  return ends(alts, value, 0).has(value.length);
}

export function startsIgnoringCase(alts: CaseAlternatives, value: string): boolean {
  return ends(alts, value, 0).size > 0;
}

export function endsIgnoringCase(alts: CaseAlternatives, value: string): boolean {
  // Read right to left: reverse the value, the order of the units and each alternative.
  const reversed = [...alts].reverse().map((choices) => choices.map((c) => [...c].reverse().join('')));
  return startsIgnoringCase(reversed, [...value].reverse().join(''));
}

// ---- paths --------------------------------------------------------------------------------------------------

/** Java's String.split on a literal separator: trailing empty parts dropped, and "" splits to [""]. */
export function javaSplit(text: string, separator: string): string[] {
  if (!text.includes(separator)) return [text];
  const parts = text.split(separator);
  while (parts.length && parts[parts.length - 1] === '') parts.pop();
  return parts;
}
