import { describe, expect, it } from 'vitest';
import {
  JsonLimitError,
  jsonTextDepth,
  MAX_JSON_DEPTH,
  parseBoundedJson,
  stringifyBounded,
  valueDepthExceeds,
} from '../../shared/bounded-json.ts';

const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
function nestedValue(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}
const limitError = (fn: () => unknown): JsonLimitError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof JsonLimitError) return err;
    throw err;
  }
  throw new Error('expected a JsonLimitError');
};

describe('bounded JSON', () => {
  it('counts depth outside strings only, exactly for valid JSON', () => {
    expect(jsonTextDepth('1')).toBe(0);
    expect(jsonTextDepth('{}')).toBe(1);
    expect(jsonTextDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonTextDepth('{"a":"[[[{{{\\"]]]"}')).toBe(1);
    expect(jsonTextDepth('["\\\\", [[]]]')).toBe(3);
    expect(jsonTextDepth(nestedText(64))).toBe(64);
  });

  it('parses up to the bound and refuses one level more, naming the bound', () => {
    expect(parseBoundedJson(nestedText(MAX_JSON_DEPTH))).toEqual(nestedValue(MAX_JSON_DEPTH));
    const err = limitError(() => parseBoundedJson(nestedText(MAX_JSON_DEPTH + 1)));
    expect(err.kind).toBe('too-deep');
    expect(err.message).toBe('nested deeper than 64 levels (the limit is 64)');
    expect(limitError(() => parseBoundedJson(nestedText(20_000))).kind).toBe('too-deep');
  });

  it('refuses text over maxBytes (UTF-8 bytes) and bad JSON', () => {
    expect(limitError(() => parseBoundedJson(JSON.stringify('é'.repeat(10)), { maxBytes: 20 })).kind).toBe('too-large');
    expect(parseBoundedJson(JSON.stringify('é'.repeat(5)), { maxBytes: 20 })).toBe('ééééé');
    expect(limitError(() => parseBoundedJson('{"a":')).kind).toBe('invalid');
  });

  it('walks built values without recursion, cycles included', () => {
    expect(valueDepthExceeds(nestedValue(64), 64)).toBe(false);
    expect(valueDepthExceeds(nestedValue(65), 64)).toBe(true);
    expect(valueDepthExceeds(nestedValue(100_000), 64)).toBe(true);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    cyclic.again = cyclic;
    expect(valueDepthExceeds(cyclic, 64)).toBe(true);
    expect(valueDepthExceeds('x', 0)).toBe(false);
  });

  it('serialises within bounds and refuses instead of overflowing', () => {
    expect(stringifyBounded({ a: [1] })).toBe('{"a":[1]}');
    expect(limitError(() => stringifyBounded(nestedValue(10_000))).kind).toBe('too-deep');
    expect(limitError(() => stringifyBounded({ s: 'x'.repeat(100) }, { maxBytes: 50 })).kind).toBe('too-large');
    expect(limitError(() => stringifyBounded({ n: 1n })).kind).toBe('invalid');
  });
});
