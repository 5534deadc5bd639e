/**
 * The soak's lease invariant reports a lease held past its bound once for as long as it stays so. Found in
 * the 30-minute soak (seed 4242): one stale lease was reported again on every check pass (89 violations for
 * one lease), since its episode was forgotten between passes.
 */
import { describe, expect, it } from 'vitest';
import { LEASE_OWNER, LEASE_UNTIL } from '../../../adapters/state-table/index.ts';
import { Invariants } from '../../../dev/soak/invariants.ts';
import { TextTap } from '../../../dev/soak/text-tap.ts';
import type { SoakWorld } from '../../../dev/soak/world.ts';

describe('soak lease invariant', () => {
  it('reports a stale lease once while it stays stale, and again only after it was taken over and went stale anew', async () => {
    const stale = {
      pk: 'CLUSTER#c1',
      sk: 'POOL#p1',
      [LEASE_OWNER]: 'dead-invocation',
      [LEASE_UNTIL]: Date.now() - 10 * 60_000,
    };
    const items: Record<string, unknown>[] = [stale];
    const violations: string[] = [];
    // Only what a check pass reads when the fleet has no cluster: the table and the bus's dead letters.
    const world = {
      fleet: {
        clusters: [],
        table: { name: 'state', doc: { send: async () => ({ Items: [...items] }) } },
        bus: { deadLetters: () => [] },
      },
      checks: {},
      terminalClusters: new Set<string>(),
      violate: (invariant: string) => void violations.push(invariant),
    } as unknown as SoakWorld;
    const invariants = new Invariants(world, new TextTap());
    for (let pass = 0; pass < 4; pass++) await invariants.check();
    expect(violations).toEqual(['lease']);
    items.length = 0; // taken over and released
    await invariants.check();
    items.push(stale); // held and dead again
    await invariants.check();
    await invariants.check();
    expect(violations).toEqual(['lease', 'lease']);
  });
});
