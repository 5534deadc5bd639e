import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../core/hash.ts';
import { renderPoolSpirit } from '../../core/index.ts';
import { Rng } from '../support/fuzz.ts';
import { renderInput } from './fixtures.ts';

/** The text canonicalJson wrote before decision 0033: JSON.stringify of a key-sorted copy of the whole value. */
function sortedCopyJson(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) {
        const child = (v as Record<string, unknown>)[key];
        if (child !== undefined) out[key] = sortKeys(child);
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(sortKeys(value));
}

/**
 * Values are JSON data plus what a rendered object may also hold (undefined, a symbol, a Date); a function
 * is left out, since the sorted copy of an object with a `toJSON` function had that function called.
 */
const KEYS = [
  'a',
  'b',
  'B',
  'z',
  '',
  '0',
  '1',
  '2',
  '9',
  '10',
  '01',
  '-1',
  '1.5',
  '4294967294',
  '4294967295',
  'é',
  '\u2028',
  'data',
  '__proto__',
  'toJSON',
];
const LEAVES: unknown[] = [
  0,
  -0,
  1.5,
  1e21,
  -3,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '',
  'x',
  'a"b\\c\n',
  '\ud800',
  true,
  false,
  null,
  undefined,
  Symbol('s'),
  new Date(0),
];

function value(rng: Rng, depth: number): unknown {
  const r = rng.next();
  if (depth === 0 || r < 0.4) return rng.pick(LEAVES);
  if (r < 0.65) return Array.from({ length: rng.int(4) }, () => value(rng, depth - 1));
  const obj: Record<string, unknown> = {};
  for (let i = rng.int(6); i > 0; i--) {
    // defineProperty, so that a `__proto__` key is an own property, as JSON.parse makes it.
    Object.defineProperty(obj, rng.pick(KEYS), {
      value: value(rng, depth - 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return obj;
}

describe('canonicalJson', () => {
  it('writes the text of the key-sorted copy for 5,000 generated values', () => {
    const rng = new Rng(20261203);
    for (let i = 0; i < 5000; i++) {
      const v = value(rng, 4);
      expect(canonicalJson(v), `case ${i}`).toBe(sortedCopyJson(v));
    }
  });

  it('orders index keys numerically, then the rest by code unit, at every level', () => {
    const v = { b: 1, 10: 2, a: { z: 1, 2: 0, 1: 0 }, 9: [{ y: 1, x: 2 }] };
    expect(canonicalJson(v)).toBe('{"9":[{"x":2,"y":1}],"10":2,"a":{"1":0,"2":0,"z":1},"b":1}');
  });

  it('keeps the hashes of rendered objects as they were', async () => {
    const rendered = await renderPoolSpirit(await renderInput());
    expect(canonicalJson(rendered.objects)).toBe(sortedCopyJson(rendered.objects));
    expect(rendered.desiredHash).toBe(sha256Hex(sortedCopyJson(rendered.objects)));
  });
});
