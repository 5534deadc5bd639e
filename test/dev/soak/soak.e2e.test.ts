/**
 * A 60 s fixed-seed chaos soak on the local fleet (1 cluster × 3 pools, etcd store so the whole stack can be
 * killed and resumed): every fault kind is injected at least once and no invariant is violated, during the
 * run or after it quiesces. `npm run soak` runs the same thing longer and larger.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAULTS } from '../../../dev/soak/faults.ts';
import { OPERATIONS } from '../../../dev/soak/operations.ts';
import { runSoak } from '../../../dev/soak/soak.ts';

describe('chaos soak, 60 s, seed 20261202', () => {
  it('injects every fault kind and breaks no invariant', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'ps-soak-test-'));
    const progress: string[] = [];
    try {
      const report = await runSoak({
        minutes: 1,
        clusters: 1,
        pools: 3,
        nodesPerPool: 2,
        seed: 20261202,
        store: 'etcd',
        stateDir,
        quiesceMs: 60_000,
        progress: (line) => progress.push(line),
      });
      expect(report.violations, JSON.stringify(report.violations, null, 2)).toEqual([]);
      const missed = Object.keys(FAULTS).filter((kind) => !(report.faults[kind]?.done >= 1));
      expect(missed, `fault kinds never injected; faults: ${JSON.stringify(report.faults)}`).toEqual([]);
      expect(report.fleet.stackRestarts).toBeGreaterThanOrEqual(1);
      // The operations ran too, most of them more than once, and the fleet was whole again at the end.
      const ran = Object.keys(OPERATIONS).filter((kind) => report.operations[kind]?.done >= 1);
      expect(ran.length, JSON.stringify(report.operations)).toBeGreaterThanOrEqual(Object.keys(OPERATIONS).length - 4);
      expect(report.quiescedInMs).not.toBeNull();
      expect(report.checks.available).toBeGreaterThan(0);
      expect(report.checks['secret-scan']).toBeGreaterThan(0);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  }, 150_000);
});
