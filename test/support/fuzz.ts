/**
 * A tiny seeded fuzzer: a PRNG (mulberry32) and structure-aware mutations of a valid JSON value. Every
 * mutation names the path it changed, so a test can demand that the resulting error names that field.
 * Set PS_FUZZ_SEED to replay a run; the seed in use is printed by the tests.
 */

export type Path = (string | number)[];
export interface Mutation {
  value: unknown;
  /** Where the mutation was made (the field an error should name). */
  path: Path;
  /** What was done, e.g. `wrong type (number)` — for failure messages. */
  op: string;
  /** The mutated node was an object or array: an error may rightly name a field inside it. */
  container?: boolean;
}

export function fuzzSeed(fallback = 0x5eed): number {
  const raw = process.env.PS_FUZZ_SEED;
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`PS_FUZZ_SEED must be an integer, got "${raw}"`);
  return n >>> 0;
}

/** mulberry32: 32-bit state, good enough spread for test-case generation, and trivially reproducible. */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Strings that break naive code: huge, empty, control characters, lone surrogates, RTL, injection-ish. */
export function nastyString(rng: Rng): string {
  return rng.pick([
    () => '',
    () => ' ',
    () => 'x'.repeat(100_000 + rng.int(1000)),
    () => '💥'.repeat(300),
    () => '\u0000\u0001\u001f',
    () => '\ud800',
    () => '\u202e' + 'evil',
    () => 'ḁ̷̢̛̬͚͖̫̙̞̙͒͊̑̃ͅ',
    () => '../../etc/passwd',
    () => `\${jndi:ldap://x}`,
    () => '<script>alert(1)</script>',
    () => "'; DROP TABLE x; --",
    () => '%s%s%n',
    () => '__proto__',
    () => 'constructor',
    () => '1e309',
    () => 'NaN',
    () => '-0',
    () => 'true',
    () => 'null',
    () => '2026-13-45T99:99:99Z',
    () => ' trailing ',
    () => 'a#b',
  ])();
}

/** A value of a random (mostly wrong) type. */
export function randomValue(rng: Rng, depth = 0): unknown {
  return rng.pick([
    () => null,
    () => undefined,
    () => true,
    () => 0,
    () => -1,
    () => 1.5,
    () => Number.MAX_SAFE_INTEGER + 2,
    () => 1e308,
    () => Number.NaN,
    () => Number.POSITIVE_INFINITY,
    () => -0,
    () => nastyString(rng),
    () => [],
    () => ({}),
    () => (depth < 2 ? [randomValue(rng, depth + 1)] : []),
    () => (depth < 2 ? { [nastyString(rng).slice(0, 20) || 'k']: randomValue(rng, depth + 1) } : {}),
    () => deepNest(200 + rng.int(2000)),
    () => JSON.parse('{"__proto__": {"polluted": true}}'),
    () => JSON.parse('{"constructor": {"prototype": {"polluted": true}}}'),
  ])();
}

/** An object or array nested `depth` levels deep (recursion and stack depth in validators). */
export function deepNest(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value))
    value.forEach((v, i) => {
      pathsOf(v, [...prefix, i], out);
    });
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, k], out);
  return out;
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], value);
}

/** Sets (or, with `remove`, deletes) at path in a deep copy; the root path replaces the whole value. */
function setAt(value: unknown, path: Path, next: unknown, remove = false): unknown {
  if (path.length === 0) return next;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  const parent = getAt(copy, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path[path.length - 1];
  if (remove) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  } else {
    // defineProperty so `__proto__` becomes an own property, as JSON.parse would make it.
    Object.defineProperty(parent, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** Numbers as strings and strings as numbers: the classic coercion confusions. */
function confused(v: unknown): unknown {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string' && v !== '' && !Number.isNaN(Number(v))) return Number(v);
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return [v];
  return JSON.stringify(v);
}

/** One random mutation of a valid value; the path names the field whose value was made wrong. */
export function mutate(rng: Rng, valid: unknown): Mutation {
  const paths = pathsOf(valid);
  const path = rng.chance(0.05) ? [] : rng.pick(paths.length > 1 ? paths.slice(1) : paths);
  const current = getAt(valid, path);
  const container = current !== null && typeof current === 'object';
  const m = mutateAt(rng, valid, path, current);
  return container ? { ...m, container } : m;
}

function mutateAt(rng: Rng, valid: unknown, path: Path, current: unknown): Mutation {
  const kind = rng.int(7);
  if (kind === 0 && path.length > 0) return { value: setAt(valid, path, undefined, true), path, op: 'deleted' };
  if (kind === 1)
    return {
      value: setAt(valid, path, confused(current)),
      path,
      op: `type confusion (${typeof current} → ${typeof confused(current)})`,
    };
  if (kind === 2 && typeof current === 'string') {
    const s = nastyString(rng);
    return { value: setAt(valid, path, rng.chance(0.5) ? s : current + s), path, op: 'nasty string' };
  }
  if (kind === 3 && current && typeof current === 'object' && !Array.isArray(current)) {
    const key = rng.pick([
      '__proto__',
      'constructor',
      'prototype',
      'unexpectedField',
      nastyString(rng).slice(0, 40) || 'x',
    ]);
    return {
      value: setAt(valid, [...path, key], randomValue(rng)),
      path,
      op: `extra key ${JSON.stringify(key.slice(0, 20))}`,
    };
  }
  if (kind === 4 && typeof current === 'number') {
    return {
      value: setAt(valid, path, rng.pick([-1, 0.5, 1e21, -1e21, Number.NaN, Number.MAX_SAFE_INTEGER * 4])),
      path,
      op: 'number out of range',
    };
  }
  const replacement = randomValue(rng);
  return { value: setAt(valid, path, replacement), path, op: `replaced with ${describe(replacement)}` };
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `array(${v.length})`;
  if (typeof v === 'string') return v.length > 30 ? `string(${v.length})` : JSON.stringify(v);
  if (typeof v === 'object')
    return `object{${Object.keys(v as object)
      .slice(0, 3)
      .join(',')}}`;
  return String(v);
}

/** `detail.clusterId`, `resources[0]`, `(event)` — the form EventValidationError and the parsers use. */
export function pathText(path: Path, root = '(event)'): string {
  if (path.length === 0) return root;
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Whether `named` (a path an error names) is the mutated path, inside it, or one of its ancestors. */
export function pathsRelated(named: string, mutated: string): boolean {
  if (named === mutated) return true;
  const inside = (a: string, b: string) => a.startsWith(b) && (a[b.length] === '.' || a[b.length] === '[');
  return inside(named, mutated) || inside(mutated, named);
}
