import { describe, expect, it } from 'vitest';
import { CLUSTER_THREADS_FROM, defaultClusterThreads } from '../../../../dev/local/fleet/fleet.ts';

describe('cluster threads by default', () => {
  it('keeps a small fleet (the default local up, 2 clusters) on the main thread', () => {
    expect(defaultClusterThreads(2, 8)).toBe(0);
    expect(defaultClusterThreads(CLUSTER_THREADS_FROM - 1, 8)).toBe(0);
  });

  it('keeps every cluster on the main thread on a single core, where a thread only adds its start-up', () => {
    expect(defaultClusterThreads(20, 1)).toBe(0);
  });

  it('gives a larger fleet one thread per core, never more threads than clusters', () => {
    expect(defaultClusterThreads(20, 2)).toBe(2);
    expect(defaultClusterThreads(20, 8)).toBe(8);
    expect(defaultClusterThreads(CLUSTER_THREADS_FROM, 8)).toBe(CLUSTER_THREADS_FROM);
  });
});
