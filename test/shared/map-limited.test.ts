import { describe, expect, it } from 'vitest';
import { mapLimited } from '../../shared/map-limited.ts';

describe('mapLimited', () => {
  it('keeps results in item order and never has more than `limit` calls in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const release: Array<() => void> = [];
    const run = mapLimited([5, 1, 4, 2, 3], 2, async (n, i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => release.push(r));
      inFlight--;
      return `${i}:${n * 10}`;
    });
    // Release whatever is waiting, one at a time, until all five have run.
    for (let done = 0; done < 5; done++) {
      await new Promise<void>((r) => setImmediate(r));
      expect(inFlight).toBeLessThanOrEqual(2);
      release.shift()!();
    }
    expect(await run).toEqual(['0:50', '1:10', '2:40', '3:20', '4:30']);
    expect(most).toBe(2);
  });

  it('refuses a limit below 1 instead of doing nothing', async () => {
    await expect(mapLimited([1], 0, async (n) => n)).rejects.toThrow(/limit must be at least 1, got 0/);
  });

  it('rejects with the first failure', async () => {
    await expect(
      mapLimited([1, 2, 3], 3, async (n) => {
        if (n === 2) throw new Error('boom 2');
        return n;
      }),
    ).rejects.toThrow('boom 2');
  });
});
