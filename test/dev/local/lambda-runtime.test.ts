import { describe, expect, it } from 'vitest';
import { FunctionTimeoutError, LocalFunction } from '../../../dev/local/lambda-runtime.ts';

describe('LocalFunction', () => {
  it('never runs more invocations at once than its concurrency', async () => {
    let active = 0;
    let peak = 0;
    const fn = new LocalFunction(
      async (n: number) => {
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((r) => setImmediate(r));
        active -= 1;
        return n * 2;
      },
      { name: 'double', timeoutMs: 1000, concurrency: 3 },
    );
    const results = await Promise.all([...Array(20).keys()].map((n) => fn.invoke(n)));
    expect(results).toEqual([...Array(20).keys()].map((n) => n * 2));
    expect(peak).toBe(3);
    expect(fn.stats).toMatchObject({ invocations: 20, maxRunning: 3, running: 0, errors: 0 });
  });

  it('fails an invocation that passes its timeout and gives the handler its remaining time', async () => {
    let remaining = -1;
    const fn = new LocalFunction(
      async (_e: unknown, ctx) => {
        remaining = ctx.getRemainingTimeInMillis();
        await new Promise(() => undefined);
      },
      { name: 'stuck', timeoutMs: 50, concurrency: 1 },
    );
    await expect(fn.invoke({})).rejects.toBeInstanceOf(FunctionTimeoutError);
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(50);
    expect(fn.stats).toMatchObject({ timeouts: 1, errors: 1, running: 0 });
  });
});

describe('LocalFunction.perContainer', () => {
  it('never gives one container two invocations at once, and reuses warm ones', async () => {
    const busy = new Set<number>();
    let overlap = false;
    let made = 0;
    const fn = LocalFunction.perContainer(
      () => {
        const id = made++;
        return async () => {
          if (busy.has(id)) overlap = true;
          busy.add(id);
          await new Promise((r) => setImmediate(r));
          busy.delete(id);
          return id;
        };
      },
      { name: 'c', timeoutMs: 1000, concurrency: 4 },
    );
    await Promise.all([...Array(40).keys()].map(() => fn.invoke({})));
    expect(overlap).toBe(false);
    expect(fn.stats.containers).toBe(4);
    await fn.invoke({});
    expect(fn.stats.containers).toBe(4);
  });
});
