import { describe, expect, it } from 'vitest';
import { compilePattern, InvalidPatternError, matches } from '../../../../dev/local/bus/pattern.ts';
import { cases, DOCS, ec2Event, ec2Terminated, invalid } from './pattern-vectors.ts';

describe('event pattern matching (EventBridge documentation cases)', () => {
  it.each(cases.map((c) => [`${c.section}: ${c.name}`, c] as const))('%s', (_title, c) => {
    expect(matches(compilePattern(c.pattern), c.event), `${DOCS[c.doc]} — ${c.section}`).toBe(c.expected);
  });

  it('covers every operator with positive and negative cases', () => {
    const ops = [
      'prefix',
      'suffix',
      'equals-ignore-case',
      'anything-but',
      'numeric',
      'exists',
      'wildcard',
      'cidr',
      '$or',
    ];
    for (const op of ops) {
      const withOp = cases.filter((c) => JSON.stringify(c.pattern).includes(`"${op}"`));
      expect(
        withOp.some((c) => c.expected),
        `${op} positive`,
      ).toBe(true);
      expect(
        withOp.some((c) => !c.expected),
        `${op} negative`,
      ).toBe(true);
    }
  });

  it('accepts the pattern as JSON text, as the EventBridge API does', () => {
    expect(matches(compilePattern(JSON.stringify(ec2Terminated)), ec2Event)).toBe(true);
  });

  it('does not match non-object events', () => {
    const compiled = compilePattern({ source: ['aws.ec2'] });
    expect(matches(compiled, null)).toBe(false);
    expect(matches(compiled, 'aws.ec2')).toBe(false);
    expect(matches(compiled, [ec2Event])).toBe(false);
  });

  it('matches a hostile wildcard in linear time', () => {
    const compiled = compilePattern({ v: [{ wildcard: `${'a*'.repeat(50)}b` }] });
    const started = performance.now();
    expect(matches(compiled, { v: 'a'.repeat(20_000) })).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('invalid event patterns', () => {
  it.each(invalid.map((c) => [c.rule, c] as const))('%s', (_rule, c) => {
    let error: unknown;
    try {
      compilePattern(c.pattern);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidPatternError);
    const e = error as InvalidPatternError;
    expect(e.path).toBe(c.path);
    expect(e.message).toMatch(c.reason);
    if (c.path) expect(e.message).toContain(c.path);
  });
});
