/**
 * The local bus's EventBridge pattern matcher (dev/local/bus/pattern*.ts) judged by AWS's event-ruler 2.1.0, the
 * library EventBridge's pattern language comes from (tools/event-ruler, built by scripts/event-ruler.sh). Thousands
 * of seeded cases (pattern-judge-cases.ts) and every hand-picked vector of the project (pattern-vectors.ts) go
 * through both; they must agree on whether the pattern is valid and, when it is, whether the event matches.
 * The only exceptions are listed below, each with its source, and the local matcher does what EventBridge does
 * there. Set PS_FUZZ_SEED to replay another seed.
 */
import { describe, expect, it } from 'vitest';
import { type JudgeAnswer, judgeWithEventRuler } from '../../../../dev/local/bus/judge/event-ruler.ts';
import {
  type CompiledPattern,
  compilePattern,
  matches,
  parseJsonKeepingNumbers,
} from '../../../../dev/local/bus/pattern.ts';
import { fuzzSeed } from '../../../support/fuzz.ts';
import { generatePatternCases } from './pattern-judge-cases.ts';
import { cases as documentedCases, invalid as invalidVectors } from './pattern-vectors.ts';

const GENERATED = 5000;

interface Case {
  id: number;
  kind: string;
  pattern: string;
  event: string;
}

interface LocalAnswer {
  valid: boolean;
  match?: boolean;
  error?: string;
}

/** The documented differences between EventBridge and event-ruler; the local matcher does what EventBridge does. */
const EXCEPTIONS = {
  numericRange: {
    what: 'EventBridge refuses numeric-operator values beyond ±5.0e9; event-ruler takes any double',
    source:
      'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html#filtering-numeric-matching',
    applies: (_er: JudgeAnswer, local: LocalAnswer) =>
      !local.valid && /numeric values must be between -5\.0e9 and 5\.0e9/.test(local.error ?? ''),
  },
  emptyAnythingButList: {
    what:
      'event-ruler 2.1.0 accepts an anything-but prefix/suffix/equals-ignore-case/wildcard with an empty list, then ' +
      'throws NullPointerException on every event holding the field; the local bus refuses the pattern',
    source:
      'event-ruler 2.1.0 JsonRuleCompiler.processAnythingButValuesSetMatchExpression (no check for an empty list)',
    applies: (_er: JudgeAnswer, local: LocalAnswer) =>
      !local.valid && /must not be an empty list/.test(local.error ?? ''),
  },
} as const;

function localAnswer(c: Case): LocalAnswer {
  let compiled: CompiledPattern;
  try {
    compiled = compilePattern(c.pattern);
  } catch (err) {
    return { valid: false, error: (err as Error).message };
  }
  return { valid: true, match: matches(compiled, parseJsonKeepingNumbers(c.event)) };
}

const agree = (er: JudgeAnswer, local: LocalAnswer) =>
  er.valid === local.valid && (!er.valid || (er.error === undefined && er.match === local.match));

/** A pattern with every `numeric` matcher taken out of its lists (lists left empty lose their field). */
function withoutNumericMatchers(pattern: unknown): unknown {
  if (Array.isArray(pattern)) return pattern.map(withoutNumericMatchers);
  if (typeof pattern !== 'object' || pattern === null) return pattern;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(pattern)) {
    if (Array.isArray(value) && key !== '$or') {
      const kept = value.filter((m) => !(typeof m === 'object' && m !== null && 'numeric' in m));
      if (kept.length) out[key] = kept;
    } else {
      out[key] = withoutNumericMatchers(value);
    }
  }
  return out;
}

function allCases(seed: number): Case[] {
  const out: Case[] = [];
  const add = (kind: string, pattern: string, event: string) => out.push({ id: out.length, kind, pattern, event });
  for (const c of documentedCases)
    add(`documented: ${c.section}: ${c.name}`, JSON.stringify(c.pattern), JSON.stringify(c.event));
  for (const c of invalidVectors) {
    const pattern = typeof c.pattern === 'string' ? c.pattern : JSON.stringify(c.pattern);
    add(`invalid vector: ${c.rule}`, pattern, '{"source":"x"}');
  }
  for (const c of generatePatternCases(seed, GENERATED)) add(c.kind, c.pattern, c.event);
  return out;
}

describe('the local EventBridge pattern matcher, judged by event-ruler 2.1.0', () => {
  it('agrees with event-ruler on validity and on every match, but for the documented exceptions', async () => {
    const seed = fuzzSeed(0xe7e17);
    const cases = allCases(seed);
    const started = performance.now();
    const [answers, local] = await Promise.all([
      judgeWithEventRuler(cases),
      Promise.resolve().then(() => cases.map(localAnswer)),
    ]);

    const excepted = new Map<string, number>();
    let suspects: { c: Case; er: JudgeAnswer; local: LocalAnswer }[] = [];
    for (const c of cases) {
      const er = answers[c.id];
      const mine = local[c.id];
      if (agree(er, mine)) continue;
      const exception = Object.entries(EXCEPTIONS).find(([, e]) => e.applies(er, mine));
      if (exception) excepted.set(exception[0], (excepted.get(exception[0]) ?? 0) + 1);
      else suspects.push({ c, er, local: mine });
    }

    // event-ruler 2.1.0 sometimes loses a string match on a field whose list also holds a `numeric` matcher
    // ({"a": ["x", {"numeric": ["<=", 100]}, {"prefix": "y"}]} does not match {"a": "x"}). A miss is put down to
    // that defect only when event-ruler, asked again without the numeric matchers, agrees with the local matcher.
    const lostMatches = suspects.filter((s) => s.er.valid && s.er.match === false && s.local.match === true);
    if (lostMatches.length) {
      const again = await judgeWithEventRuler(
        lostMatches.map((s, id) => ({
          id,
          pattern: JSON.stringify(withoutNumericMatchers(JSON.parse(s.c.pattern))),
          event: s.c.event,
        })),
      );
      const explained = new Set(lostMatches.filter((_, i) => again[i].valid && again[i].match === true));
      if (explained.size) excepted.set('numericDefect', explained.size);
      suspects = suspects.filter((s) => !explained.has(s));
    }
    const seconds = (performance.now() - started) / 1000;

    const report = suspects.map(
      ({ c, er, local: mine }) =>
        `${c.kind}\n  pattern: ${c.pattern}\n  event:   ${c.event}\n  event-ruler: ${JSON.stringify(er)}\n  local:       ${JSON.stringify(mine)}`,
    );
    const invalid = answers.filter((a) => !a.valid).length;
    const matched = answers.filter((a) => a.match === true).length;
    console.log(
      `event-ruler judge (seed ${seed}): ${cases.length} cases, ${invalid} invalid patterns, ${matched} matches, ` +
        `${cases.length - invalid - matched} non-matches; exceptions ${JSON.stringify(Object.fromEntries(excepted))}; ` +
        `${suspects.length} disagreements; ${seconds.toFixed(1)} s`,
    );
    expect(report, `disagreements with event-ruler:\n${report.join('\n')}`).toEqual([]);
    // The generator must keep putting all three answers to the test.
    expect(invalid).toBeGreaterThan(cases.length / 20);
    expect(matched).toBeGreaterThan(cases.length / 6);
    expect(cases.length - invalid - matched).toBeGreaterThan(cases.length / 3);
  }, 120_000);
});
