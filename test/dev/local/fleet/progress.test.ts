import { describe, expect, it } from 'vitest';
import { progressJson, renderProgress, totals } from '../../../../dev/local/fleet/progress.ts';

const fleet = (available: number[]) => ({
  elapsedMs: 1500,
  clusters: available.map((a, i) => ({ id: `c${i}`, wanted: 3, available: a, failing: 0 })),
  eventsRouted: 42,
  deadLetters: 0,
  reconciles: 9,
  errors: 1,
});

describe('fleet progress', () => {
  it('shows each cluster and the fleet total', () => {
    const lines = renderProgress(fleet([3, 1]));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^c0 .* 3\/3 available$/);
    expect(lines[1]).toMatch(/1\/3 available/);
    expect(lines[2]).toContain('4/6 pools available in 2 clusters');
    expect(lines[2]).toContain('42 events routed');
  });

  it('summarises a large fleet to the clusters still converging', () => {
    const lines = renderProgress(fleet([...Array(30).fill(3), 2]), 12);
    expect(lines[0]).toMatch(/^c30 .*2\/3/);
    expect(lines[1]).toBe('… 30 more clusters');
  });

  it('is converged only when every wanted pool is available', () => {
    expect(totals(fleet([3, 3])).converged).toBe(true);
    expect(totals(fleet([3, 2])).converged).toBe(false);
    expect(JSON.parse(progressJson(fleet([3, 2])))).toMatchObject({
      type: 'progress',
      wanted: 6,
      available: 5,
      converged: false,
    });
  });
});
