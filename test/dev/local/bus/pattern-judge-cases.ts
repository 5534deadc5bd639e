/**
 * A seeded generator of EventBridge (pattern, event) cases for the event-ruler judge
 * (test/dev/local/bus/pattern-judge.e2e.test.ts). Deterministic by seed. Every operator appears, in and out of
 * `$or`, nested, against scalars, arrays of scalars and arrays of objects, under plain, dotted, unicode,
 * empty-ish and `$`-prefixed keys; and a share of the patterns are invalid on purpose. Events are built to sit
 * on both sides of each condition (values taken from the pattern, their case and spelling variants, boundary
 * numbers, addresses in and out of a block), so matches and non-matches come in similar numbers.
 */
import { Rng } from '../../../support/fuzz.ts';

/** A JSON number kept as its text, so spellings such as 3.0e2, -0 or 20-digit integers reach both matchers. */
export class RawNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

type Value = string | number | boolean | null | RawNumber | Value[] | { [key: string]: Value };
type Obj = { [key: string]: Value };

export interface GeneratedCase {
  /** Which generator made it (`valid`, `invalid:<kind>`, `keys`, ...), for the report. */
  kind: string;
  pattern: string;
  event: string;
}

/** JSON text of a value with RawNumber spelled as given. */
export function jsonText(v: Value): string {
  if (v instanceof RawNumber) return v.text;
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

const STRINGS = [
  '',
  ' ',
  'a',
  'A',
  'ab',
  'abc',
  'Abc',
  'ABC',
  'init',
  'initializing',
  'running',
  'x.png',
  'X.PNG',
  'dir/a/b.png',
  'arn:aws:s3:::bucket/key.png',
  'ß',
  'SS',
  'é',
  'É',
  'Σίσυφος',
  'ΣΊΣΥΦΟΣ',
  'İstanbul',
  'istanbul',
  'ǅ',
  'K',
  'k',
  '日本',
  '😀',
  'a😀b',
  'a*b',
  'a\\b',
  'a"b',
  '5',
  'true',
  'null',
  '10.0.0.1',
  '10.0.0.255',
  '10.0.1.1',
  '192.168.1.1',
  '2001:db8::1',
  '2001:0db8:0:0:0:0:0:1',
  '2001:db9::1',
  '::1',
  '::ffff:10.0.0.1',
  '1.2.3.999',
  '010.0.0.1',
  '10.0.0',
];

const NUMBERS = [
  '0',
  '-0',
  '1',
  '-1',
  '5',
  '5.0',
  '5e0',
  '0.5',
  '2.5',
  '100',
  '1e2',
  '123',
  '200',
  '300',
  '3.0e2',
  '301.8',
  '3.018e2',
  '-5e9',
  '5e9',
  '5000000000.5',
  '6e9',
  '-6e9',
  '1e400',
  '1E2',
  '12345678901234567890',
  '12345678901234567891',
  '0.1',
  '0.10000000000000000001',
  '1.5e-7',
  '111122223333',
];

const KEYS = [
  'a',
  'b',
  'c',
  'detail',
  'state',
  'source',
  'x.y',
  'a.b',
  'ключ',
  'é',
  '😀',
  '',
  ' ',
  '$x',
  '$',
  '$or2',
  'prefix',
  'numeric',
  'exists',
  'anything-but',
];

const OPERATOR_KEYS = new Set([
  'exactly',
  'equals-ignore-case',
  'prefix',
  'suffix',
  'anything-but',
  'exists',
  'wildcard',
  'numeric',
  'cidr',
]);

const CIDRS = [
  '10.0.0.0/24',
  '10.0.0.0/8',
  '10.0.0.5/24',
  '10.0.0.0/31',
  '0.0.0.0/0',
  '192.168.0.0/16',
  '2001:db8::/32',
  '2001:db8::/127',
  '::/0',
  '::ffff:10.0.0.0/104',
];

class Generator {
  readonly rng: Rng;
  constructor(seed: number) {
    this.rng = new Rng(seed);
  }

  str(): string {
    return this.rng.pick(STRINGS);
  }
  num(): RawNumber {
    return new RawNumber(this.rng.pick(NUMBERS));
  }
  key(): string {
    return this.rng.chance(0.55) ? this.rng.pick(['a', 'b', 'c', 'detail']) : this.rng.pick(KEYS);
  }
  /** A numeric-operator number: mostly inside EventBridge's ±5e9, sometimes at or beyond it. */
  bound(): RawNumber {
    return new RawNumber(
      this.rng.pick([
        '0',
        '-0',
        '1',
        '5',
        '5.0',
        '10',
        '2.5',
        '-1',
        '100',
        '3.018e2',
        '0.5',
        '5e9',
        '-5e9',
        '1e2',
        '6e9',
        '-5000000000.5',
      ]),
    );
  }

  wildcard(): string {
    const parts = ['', 'a', 'b', 'x', '.png', '/', 'dir/', 'é', '\\*', '\\\\', 'init', 'aws:'];
    let out = '';
    const n = 1 + this.rng.int(3);
    for (let i = 0; i < n; i++) {
      out += this.rng.pick(parts);
      if (this.rng.chance(0.6) && !out.endsWith('*')) out += '*';
    }
    return out;
  }

  /** One element of a match list. */
  matcher(): Value {
    const r = this.rng;
    switch (r.int(22)) {
      case 0:
      case 1:
        return this.str();
      case 2:
        return this.num();
      case 3:
        return r.pick([true, false, null]);
      case 4:
        return { prefix: r.chance(0.3) ? { 'equals-ignore-case': this.str() } : this.str().slice(0, 1 + r.int(3)) };
      case 5:
        return { suffix: r.chance(0.3) ? { 'equals-ignore-case': this.str() } : this.str().slice(-1 - r.int(3)) };
      case 6:
      case 7:
        return { 'equals-ignore-case': this.str() };
      case 8:
        return { wildcard: this.wildcard() };
      case 9:
        return { 'anything-but': r.chance(0.5) ? this.str() : this.num() };
      case 10:
        return {
          'anything-but': r.chance(0.5) ? [this.str(), this.str()] : [this.num(), this.num(), this.num()],
        };
      case 11: {
        const op = r.pick(['prefix', 'suffix', 'equals-ignore-case', 'wildcard']);
        const one = (): string => {
          if (op === 'wildcard') return this.wildcard();
          const s = this.str() || 'a';
          return op === 'prefix' ? s.slice(0, 2) : op === 'suffix' ? s.slice(-2) : s;
        };
        return { 'anything-but': { [op]: r.chance(0.5) ? one() : [one(), one()] } };
      }
      case 12:
      case 13:
        return { numeric: this.numericArgs() };
      case 14:
      case 15:
        return { exists: r.chance(0.5) };
      case 16:
        return { cidr: r.pick(CIDRS) };
      case 17:
        return { exactly: this.str() };
      case 18:
        return this.num();
      case 19:
        return this.str();
      default:
        return r.pick([{ exists: false }, { exists: true }, this.str()]);
    }
  }

  numericArgs(): Value[] {
    const r = this.rng;
    const lowerOp = r.pick(['>', '>=']);
    const upperOp = r.pick(['<', '<=']);
    switch (r.int(4)) {
      case 0:
        return ['=', this.bound()];
      case 1:
        return [lowerOp, this.bound()];
      case 2:
        return [upperOp, this.bound()];
      default: {
        const a = this.bound();
        const b = this.bound();
        return [lowerOp, a, upperOp, b];
      }
    }
  }

  /** A random valid-looking pattern object (it may still be invalid, e.g. an unordered range). */
  pattern(depth: number, insideOr: boolean): Obj {
    const r = this.rng;
    const out: Obj = {};
    const fields = 1 + r.int(depth === 0 ? 3 : 2);
    for (let i = 0; i < fields; i++) {
      let key = this.key();
      if (insideOr && OPERATOR_KEYS.has(key) && r.chance(0.8)) key = 'b';
      if (depth < 2 && r.chance(0.12)) {
        out.$or = Array.from({ length: 2 + r.int(2) }, () => this.pattern(depth + 1, true));
      } else if (depth < 2 && r.chance(0.25)) {
        out[key] = this.pattern(depth + 1, insideOr);
      } else {
        out[key] = Array.from({ length: 1 + r.int(3) }, () => this.matcher());
      }
    }
    return out;
  }

  /** A value likely to satisfy (or narrowly miss) one match-list element. */
  valueFor(m: Value): Value {
    const r = this.rng;
    if (m === null || typeof m !== 'object' || m instanceof RawNumber || Array.isArray(m)) {
      if (typeof m === 'string' && r.chance(0.3)) return this.caseVariant(m);
      if (m instanceof RawNumber && r.chance(0.4)) return this.num();
      return r.chance(0.85) ? m : this.scalar();
    }
    const [op, arg] = Object.entries(m)[0] ?? ['', null];
    const text = (x: Value): string =>
      typeof x === 'string'
        ? x
        : typeof x === 'object' && x !== null && !Array.isArray(x) && !(x instanceof RawNumber)
          ? String(Object.values(x)[0] ?? '')
          : 'a';
    switch (op) {
      case 'prefix':
        return this.caseVariant(text(arg)) + r.pick(['', 'x', 'ializing', '.png']);
      case 'suffix':
        return r.pick(['', 'x', 'image', 'dir/']) + this.caseVariant(text(arg));
      case 'equals-ignore-case':
      case 'exactly':
        return this.caseVariant(text(arg));
      case 'wildcard':
        return text(arg)
          .replace(/\\\*/g, '\u0001')
          .replace(/\\\\/g, '\\')
          .replace(/\*/g, () => r.pick(['', 'x', 'a/b', '*']))
          .replaceAll('\u0001', '*');
      case 'numeric': {
        const args = Array.isArray(arg) ? arg : [];
        const n = args.find((x) => x instanceof RawNumber);
        if (n instanceof RawNumber && r.chance(0.6)) {
          const v = Number(n.text);
          return new RawNumber(String(r.pick([v, v + 1, v - 1, v + 0.5, v - 1e-6])));
        }
        return this.num();
      }
      case 'cidr': {
        return r.pick(STRINGS.filter((s) => /^[\d.:a-f]+$/.test(s)));
      }
      case 'anything-but': {
        if (typeof arg === 'string' || arg instanceof RawNumber) return r.chance(0.5) ? arg : this.scalar();
        if (Array.isArray(arg)) return r.chance(0.5) ? r.pick(arg) : this.scalar();
        return this.valueFor(arg);
      }
      default:
        return this.scalar();
    }
  }

  caseVariant(s: string): string {
    return this.rng.pick([s, s.toUpperCase(), s.toLowerCase(), s]);
  }

  scalar(): Value {
    const r = this.rng;
    const k = r.int(10);
    return k < 6 ? this.str() : k < 9 ? this.num() : r.pick([true, false, null]);
  }

  /** A value at a leaf field of the event: one value, an array of values, or something that is not a leaf. */
  leafValue(list: Value[]): Value | undefined {
    const r = this.rng;
    const pick = (): Value => this.valueFor(r.pick(list));
    switch (r.int(12)) {
      case 0:
        return undefined;
      case 1:
        return [pick(), this.scalar()];
      case 2:
        return [this.scalar(), this.scalar()];
      case 3:
        return [];
      case 4:
        return { inner: pick() };
      case 5:
        return [[pick()], this.scalar()];
      case 6:
        return this.scalar();
      default:
        return pick();
    }
  }

  /** An event shaped after a pattern, with decoys, arrays of objects and dotted spellings of nested keys. */
  eventFor(p: Obj): Obj {
    const r = this.rng;
    const out: Obj = {};
    for (const [key, value] of Object.entries(p)) {
      if (key === '$or') {
        const alts = (value as Obj[]).filter(() => r.chance(0.6));
        for (const alt of alts) Object.assign(out, this.eventFor(alt));
        continue;
      }
      if (Array.isArray(value)) {
        const v = this.leafValue(value);
        if (v !== undefined) out[key] = v;
        continue;
      }
      const nested = value as Obj;
      switch (r.int(6)) {
        case 0:
          // Arrays of objects: the pattern's fields spread over one or several elements.
          out[key] = [this.eventFor(nested), this.eventFor(nested), ...(r.chance(0.5) ? [this.scalar()] : [])];
          break;
        case 1: {
          // The same fields spelled with dots: {"a.b": v} for {"a": {"b": v}}.
          for (const [k, v] of Object.entries(this.eventFor(nested))) out[`${key}.${k}`] = v;
          break;
        }
        case 2:
          out[key] = this.scalar();
          break;
        case 3:
          if (r.chance(0.5)) break;
          out[key] = this.eventFor(nested);
          break;
        default:
          out[key] = this.eventFor(nested);
      }
    }
    if (r.chance(0.3)) out[this.key()] = this.scalar();
    return out;
  }

  /** An invalid pattern, by one of the ways EventBridge refuses them, placed somewhere inside a valid one. */
  invalid(): { kind: string; pattern: Value | string } {
    const r = this.rng;
    const bad: [string, () => Value | string][] = [
      [
        'unknown operator',
        () => ({ v: [{ [r.pick(['contains', 'regex', 'Prefix', 'not-wildcard', 'exact', '']) as string]: 'x' }] }),
      ],
      [
        'prefix not a string',
        () => ({ v: [{ prefix: r.pick<Value>([1, null, ['a'], true, { 'equals-ignore-case': 1 }, { other: 'a' }]) }] }),
      ],
      [
        'suffix not a string',
        () => ({ v: [{ suffix: r.pick<Value>([1, null, ['a'], { 'equals-ignore-case': null }]) }] }),
      ],
      [
        'equals-ignore-case not a string',
        () => ({ v: [{ 'equals-ignore-case': r.pick<Value>([1, null, ['a'], {}]) }] }),
      ],
      ['exactly not a string', () => ({ v: [{ exactly: r.pick<Value>([1, null, ['a']]) }] })],
      ['wildcard malformed', () => ({ v: [{ wildcard: r.pick<Value>(['a**b', 'a\\b', 'a\\', '**', 1, null]) }] })],
      ['exists not a boolean', () => ({ v: [{ exists: r.pick<Value>(['true', 1, null, [true]]) }] })],
      [
        'numeric malformed',
        () => ({
          v: [
            {
              numeric: r.pick<Value>([
                5,
                [],
                ['>'],
                ['>', '1'],
                ['!=', 1],
                ['=', 1, '<', 2],
                ['<', 1, '>', 0],
                ['>', 5, '<', 1],
                ['>', 1, '<', 1],
                ['>', 1, '>=', 2],
                ['<', 1, '<=', 2],
                ['>', 1, '<', 2, '<', 3],
                ['>', new RawNumber('1e400')],
                ['>', new RawNumber('0.10000000000000000001')],
                ['=', null],
                [1, '>'],
              ]),
            },
          ],
        }),
      ],
      [
        'anything-but malformed',
        () => ({
          v: [
            {
              'anything-but': r.pick<Value>([
                null,
                true,
                [],
                ['a', 1],
                [null],
                [true],
                [['a']],
                { 'anything-but': 'x' },
                { numeric: ['>', 1] },
                { exists: true },
                { prefix: '' },
                { suffix: [''] },
                { prefix: 5 },
                { suffix: ['.png', 1] },
                { 'equals-ignore-case': [1] },
                { wildcard: ['ok*', 'a**'] },
                { prefix: 'a', suffix: 'b' },
                { prefix: [] },
                {},
                new RawNumber('1e400'),
                [new RawNumber('0.10000000000000000001')],
              ]),
            },
          ],
        }),
      ],
      [
        'cidr malformed',
        () => ({
          v: [
            {
              cidr: r.pick<Value>([
                '10.0.0.1',
                '10.0.0.0/33',
                '10.0.0.1/32',
                '2001:db8::/128',
                '10.0.0.0/x',
                '10.0.0.300/24',
                '10.0.0.0/-1',
                '10.0.0.0/8/8',
                'example.com/8',
                '',
                1,
              ]),
            },
          ],
        }),
      ],
      ['match object with two operators', () => ({ v: [{ prefix: 'a', suffix: 'b' }] })],
      ['empty match object', () => ({ v: [{}] })],
      ['empty array', () => ({ v: [] })],
      ['empty object', () => ({ v: {} })],
      ['leaf not in an array', () => ({ v: r.pick<Value>(['x', 1, true, null]) })],
      ['nested array in a match list', () => ({ v: [['x']] })],
      [
        '$or malformed',
        () => ({
          $or: r.pick<Value>([
            [{ a: ['x'] }],
            { a: ['x'] },
            [{ a: ['x'] }, 'b'],
            [{ a: ['x'] }, {}],
            [],
            'x',
            [{ a: ['x'] }, [{ b: ['y'] }]],
          ]),
        }),
      ],
      [
        'operator name as a field inside $or',
        () => ({
          $or: [{ [r.pick([...OPERATOR_KEYS, '=', '<', 'regex', 'ip-address-in-range'])]: ['x'] }, { b: ['y'] }],
        }),
      ],
      ['not an object', () => r.pick<Value>([['a'], 'a', 1, null, true])],
      ['empty pattern', () => ({})],
      ['not JSON', () => r.pick(['{"a": [', '{"a": ["x"]} trailing', '', '{a: ["x"]}', "{'a': ['x']}"])],
    ];
    const [kind, make] = r.pick(bad);
    const made = make();
    if (
      typeof made === 'string' ||
      made === null ||
      typeof made !== 'object' ||
      Array.isArray(made) ||
      made instanceof RawNumber
    ) {
      return { kind, pattern: made };
    }
    // Put the bad part next to good fields, or down a level, or inside a $or alternative.
    const host = this.pattern(1, false);
    switch (r.int(4)) {
      case 0:
        return { kind, pattern: { ...host, ...made } };
      case 1:
        return { kind, pattern: { ...host, detail: made } };
      case 2:
        return { kind, pattern: { $or: [host, made] } };
      default:
        return { kind, pattern: made };
    }
  }
}

/**
 * `count` cases from `seed`: about one in seven has an invalid pattern; the rest are valid-looking patterns,
 * each asked about several events.
 */
export function generatePatternCases(seed: number, count: number): GeneratedCase[] {
  const g = new Generator(seed);
  const out: GeneratedCase[] = [];
  while (out.length < count) {
    if (g.rng.chance(0.14)) {
      const { kind, pattern } = g.invalid();
      const text = typeof pattern === 'string' ? pattern : jsonText(pattern);
      out.push({ kind: `invalid:${kind}`, pattern: text, event: jsonText(g.eventFor({ v: ['x'], a: ['a'] })) });
      continue;
    }
    const pattern = g.pattern(0, false);
    const text = jsonText(pattern);
    const events = 3 + g.rng.int(5);
    for (let i = 0; i < events && out.length < count; i++) {
      out.push({ kind: 'valid', pattern: text, event: jsonText(g.eventFor(pattern)) });
    }
  }
  return out;
}
