/**
 * Polls a condition until it returns a truthy value or the deadline passes, then fails naming what was
 * awaited. Thrown errors count as "not yet" (the thing may not exist yet) and the last one is reported.
 * Every test waits this way rather than sleeping for a guessed time.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs: number,
  what: string,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let lastValue: unknown;
  for (;;) {
    try {
      lastValue = await check();
      if (lastValue) return lastValue as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError ? `: ${(lastError as Error).message}` : `; last value: ${JSON.stringify(lastValue)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
