/**
 * The remembered parses of dynalite's expressions must answer exactly as dynalite's own parsers do: the same
 * tree with this request's values in it, the same error for an expression that cannot succeed, and the same
 * bookkeeping of which names and values the expression used (dynalite refuses unused ones).
 */
import { createRequire } from 'node:module';
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  type ExpressionParseContext,
  type ExpressionParser,
  rememberDynaliteParses,
  rememberingParser,
} from '../../../dev/local/dynalite-expressions.ts';
import { ensureTable, startLocalDynamo } from '../../../dev/local/dynamodb.ts';

const require = createRequire(import.meta.url);
// Copies of the parse functions taken before anything in this file installs the remembering ones.
const condition: ExpressionParser = { parse: (require('dynalite/db/conditionParser') as ExpressionParser).parse };
const update: ExpressionParser = { parse: (require('dynalite/db/updateParser') as ExpressionParser).parse };

function context(names: Record<string, string>, vals: Record<string, Record<string, unknown>>): ExpressionParseContext {
  return {
    attrNames: names,
    attrVals: vals,
    unusedAttrNames: Object.fromEntries(Object.keys(names).map((k) => [k, true])),
    unusedAttrVals: Object.fromEntries(Object.keys(vals).map((k) => [k, true])),
    // What dynalite's validation adds before it parses (validations/index.js `parse`); `name` stands for its
    // list of reserved words.
    ...{
      isReserved: (name: string) => name.toUpperCase() === 'NAME',
      compare: (_op: string, a: Record<string, string>, b: Record<string, string>) => Number(a.N) > Number(b.N),
    },
  };
}

function parseBoth(
  parser: ExpressionParser,
  remembering: ExpressionParser,
  input: string,
  make: () => ExpressionParseContext,
) {
  const theirs = make();
  const ours = make();
  const expected = (() => {
    try {
      return parser.parse(input, { context: theirs });
    } catch (err) {
      return `threw ${(err as Error).message}`;
    }
  })();
  const got = (() => {
    try {
      return remembering.parse(input, { context: ours });
    } catch (err) {
      return `threw ${(err as Error).message}`;
    }
  })();
  expect(got).toEqual(expected);
  expect(ours.unusedAttrNames).toEqual(theirs.unusedAttrNames);
  expect(ours.unusedAttrVals).toEqual(theirs.unusedAttrVals);
  return { got, ctx: ours };
}

const LEASE = '(attribute_not_exists(#leaseOwner) OR #leaseUntil <= :now) AND (NOT contains(#recentEvents, :eventId))';

describe('remembered dynalite expression parses', () => {
  it('reuses a parse for the same expression with new values, each answer holding its own request values', () => {
    const remembering = rememberingParser(condition);
    const make =
      (now: number, id: string, extra = false) =>
      () =>
        context(
          { '#leaseOwner': 'leaseOwner', '#leaseUntil': 'leaseUntil', '#recentEvents': 'recentEvents' },
          { ':now': { N: String(now) }, ':eventId': { S: id }, ...(extra ? { ':unused': { S: 'x' } } : {}) },
        );
    const first = parseBoth(condition, remembering, LEASE, make(1, 'a'));
    expect(remembering.hits).toBe(0);
    const second = parseBoth(condition, remembering, LEASE, make(2, 'b', true));
    expect(remembering.hits).toBe(1);
    // The tree holds this request's own value objects, not copies of the first request's.
    const json = JSON.stringify(second.got);
    expect(json).toContain('"N":"2"');
    expect(json).not.toContain('"N":"1"');
    // The unused value stays unused: dynalite refuses the request for it, as it would have.
    expect(second.ctx.unusedAttrVals).toEqual({ ':unused': true });
    // Answers share nothing: changing one leaves the next as it was.
    (first.got as { expression: { args: unknown[] } }).expression.args.length = 0;
    const third = parseBoth(condition, remembering, LEASE, make(3, 'c'));
    expect(JSON.stringify(third.got)).toContain('"N":"3"');
  });

  it('parses again when a value changes type, so a type error is still reported', () => {
    const remembering = rememberingParser(condition);
    const input = 'begins_with(#k, :prefix)';
    const make = (value: Record<string, unknown>) => () => context({ '#k': 'k' }, { ':prefix': value });
    parseBoth(condition, remembering, input, make({ S: 'ab' }));
    const { got } = parseBoth(condition, remembering, input, make({ N: '1' }));
    expect(got).toMatch(/Incorrect operand type.*begins_with.*N/);
    expect(remembering.hits).toBe(0);
  });

  it('never remembers attribute_type or BETWEEN, whose checks read the values themselves', () => {
    const remembering = rememberingParser(condition);
    const typed = (t: string) => () => context({ '#k': 'k' }, { ':t': { S: t } });
    parseBoth(condition, remembering, 'attribute_type(#k, :t)', typed('S'));
    expect(parseBoth(condition, remembering, 'attribute_type(#k, :t)', typed('XX')).got).toMatch(
      /Invalid attribute type name/,
    );
    const bounds = (lo: string, hi: string) => () => context({ '#k': 'k' }, { ':lo': { N: lo }, ':hi': { N: hi } });
    parseBoth(condition, remembering, '#k BETWEEN :lo AND :hi', bounds('1', '2'));
    expect(parseBoth(condition, remembering, '#k between :lo AND :hi', bounds('5', '2')).got).toMatch(
      /upper bound to be greater/,
    );
    expect(remembering.hits).toBe(0);
  });

  it('answers a missing placeholder, a reserved word or bad syntax as dynalite does, every time', () => {
    const remembering = rememberingParser(update);
    for (let i = 0; i < 2; i++) {
      expect(parseBoth(update, remembering, 'SET #a = :missing', () => context({ '#a': 'a' }, {})).got).toMatch(
        /attribute value used in expression is not defined/,
      );
      expect(parseBoth(update, remembering, 'SET #a = :v', () => context({}, { ':v': { S: 'x' } })).got).toMatch(
        /attribute name used in the document path is not defined/,
      );
      expect(parseBoth(update, remembering, 'SET name = :v', () => context({}, { ':v': { S: 'x' } })).got).toMatch(
        /reserved keyword/,
      );
      expect(
        parseBoth(update, remembering, 'SET #a = = :v', () => context({ '#a': 'a' }, { ':v': { S: 'x' } })).got,
      ).toMatch(/^threw /);
    }
    expect(remembering.hits).toBe(0);
  });

  it('keeps a parse apart per attribute name a placeholder stands for', () => {
    const remembering = rememberingParser(update);
    const input = 'SET #a = :v REMOVE #b ADD #n :one';
    const make = (a: string) => () =>
      context({ '#a': a, '#b': 'b', '#n': 'n' }, { ':v': { S: 'x' }, ':one': { N: '1' } });
    parseBoth(update, remembering, input, make('first'));
    const { got } = parseBoth(update, remembering, input, make('second'));
    expect(JSON.stringify(got)).toContain('"second"');
    // Same names again: a hit, with the paths of that request.
    parseBoth(update, remembering, input, make('second'));
    expect(remembering.hits).toBe(1);
  });

  it('leaves conditional writes of the local table answering as before, its parses remembered', async () => {
    const dynamo = await startLocalDynamo();
    // The local table installed them; asking again finds the same parsers and their count.
    const hits = rememberDynaliteParses();
    try {
      await ensureTable(dynamo.client, 'expressions-test');
      const key = { pk: { S: 'p' }, sk: { S: 's' } };
      await dynamo.client.send(new PutItemCommand({ TableName: 'expressions-test', Item: { ...key, n: { N: '1' } } }));
      const bump = (expected: string) =>
        dynamo.client.send(
          new UpdateItemCommand({
            TableName: 'expressions-test',
            Key: key,
            UpdateExpression: 'SET #n = :next',
            ConditionExpression: '#n = :expected',
            ExpressionAttributeNames: { '#n': 'n' },
            ExpressionAttributeValues: { ':next': { N: String(Number(expected) + 1) }, ':expected': { N: expected } },
          }),
        );
      const before = hits();
      for (let i = 1; i <= 3; i++) await bump(String(i));
      await expect(bump('1')).rejects.toThrow(/conditional request failed/i);
      // Both expressions of the three bumps after the first came from memory.
      expect(hits() - before).toBeGreaterThanOrEqual(6);
      const item = await dynamo.client.send(new GetItemCommand({ TableName: 'expressions-test', Key: key }));
      expect(item.Item?.n).toEqual({ N: '4' });
    } finally {
      await dynamo.stop();
    }
  });
});
