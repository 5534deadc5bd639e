/**
 * Runs fn over items with at most `limit` calls in flight and returns the results in item order. Every
 * fan-out in the product (clusters audited, probed or searched; pools rolled out) and in the local stack
 * goes through this one bound, so none can flood an apiserver by accident.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!(limit >= 1)) throw new RangeError(`mapLimited: limit must be at least 1, got ${limit}`);
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i); // i < items.length: the element exists (it may itself be undefined)
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
