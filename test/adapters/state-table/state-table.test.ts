import { describe, expect, it } from 'vitest';
import type { StateTable } from '../../../adapters/state-table/index.ts';
import { getItems, isExpired, keys } from '../../../adapters/state-table/index.ts';
import { useDynalite } from './backends.ts';
import { stateTableSuite } from './state-table.suite.ts';

/** The state table suite on dynalite; moto.e2e.test.ts runs the same suite on moto. */
stateTableSuite(useDynalite());

const T0 = new Date('2026-01-01T00:00:00Z');

describe('keys', () => {
  it('refuses key parts that would break the pattern, naming the part', () => {
    expect(() => keys.pool('a#b', 'p')).toThrow(/clusterId: expected a lowercase DNS name/);
    expect(() => keys.pool('a', '')).toThrow(/nodePool/);
    expect(() => keys.event('x#y')).toThrow(/event id/);
    expect(keys.pool('c1', 'edge-1')).toEqual({ pk: 'CLUSTER#c1', sk: 'POOL#edge-1' });
  });
  it('treats a passed expiresAt as absent', () => {
    expect(isExpired({ expiresAt: T0.getTime() / 1000 }, T0)).toBe(true);
    expect(isExpired({ expiresAt: T0.getTime() / 1000 + 1 }, T0)).toBe(false);
    expect(isExpired({}, T0)).toBe(false);
  });
});

describe('getItems against unprocessed keys', () => {
  // DynamoDB may leave keys unprocessed under throttling: a stub client plays that (a unit boundary).
  const stubTable = (responses: Array<{ found: string[]; unprocessed: string[] }>) => {
    const asked: string[][] = [];
    const send = async (cmd: { input: { RequestItems: Record<string, { Keys: { sk: string }[] }> } }) => {
      asked.push(cmd.input.RequestItems.t.Keys.map((k) => k.sk));
      const next = responses.shift() ?? { found: [], unprocessed: [] };
      return {
        Responses: { t: next.found.map((sk) => ({ pk: 'p', sk, id: sk })) },
        UnprocessedKeys: next.unprocessed.length
          ? { t: { Keys: next.unprocessed.map((sk) => ({ pk: 'p', sk })) } }
          : {},
      };
    };
    return { table: { doc: { send }, name: 't' } as unknown as StateTable, asked };
  };

  it('asks again for the keys DynamoDB left unprocessed', async () => {
    const stub = stubTable([
      { found: ['b'], unprocessed: ['a', 'c'] },
      { found: ['c'], unprocessed: ['a'] },
      { found: ['a'], unprocessed: [] },
    ]);
    const items = await getItems(
      stub.table,
      ['a', 'b', 'c'].map((sk) => ({ pk: 'p', sk })),
    );
    expect(items.map((i) => i?.id)).toEqual(['a', 'b', 'c']);
    expect(stub.asked).toEqual([['a', 'b', 'c'], ['a', 'c'], ['a']]);
  });

  it('fails, naming how many keys, when keys stay unprocessed', async () => {
    const stub = stubTable(Array.from({ length: 10 }, () => ({ found: [], unprocessed: ['a'] })));
    await expect(getItems(stub.table, [{ pk: 'p', sk: 'a' }])).rejects.toThrow(
      /BatchGetItem on t: 1 key\(s\) still unprocessed after 5 attempts/,
    );
    expect(stub.asked).toHaveLength(5);
  });
});
