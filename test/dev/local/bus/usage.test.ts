import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalBus, startLocalBus } from '../../../../dev/local/bus/server.ts';

describe('bus usage metering', () => {
  let bus: LocalBus;
  beforeAll(async () => {
    bus = await startLocalBus({
      rules: [{ name: 'tests', pattern: { source: ['pool-spirit.test'] }, target: 'sink' }],
      targets: { sink: async () => undefined },
    });
  });
  afterAll(() => bus.stop());

  it('bills each accepted entry per started 64 KB, counts matches per target, and leaves failed entries out', async () => {
    const before = bus.usage();
    const big = JSON.stringify({ blob: 'x'.repeat(70 * 1024) });
    const result = bus.putEvents([
      { Source: 'pool-spirit.test', DetailType: 'Small', Detail: '{"n":1}' },
      { Source: 'pool-spirit.test', DetailType: 'Big', Detail: big },
      { Source: 'pool-spirit.other', DetailType: 'Unmatched', Detail: '{"n":2}' },
      { Source: 'pool-spirit.test', DetailType: 'Bad', Detail: 'not json' },
    ]);
    expect(result.FailedEntryCount).toBe(1);
    await bus.drain();
    const after = bus.usage();
    expect(after.putEventsCalls - before.putEventsCalls).toBe(1);
    expect(after.entries - before.entries).toBe(3);
    // 1 + 2 (70 KB is two started 64 KB chunks) + 1
    expect(after.billedEvents - before.billedEvents).toBe(4);
    expect(after.matchesByTarget.sink - (before.matchesByTarget.sink ?? 0)).toBe(2);
    expect(after.entriesByType['pool-spirit.test / Big']).toBe(1);
    expect(after.entriesByType['pool-spirit.test / Bad']).toBeUndefined();
  });
});
