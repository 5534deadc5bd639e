import { beforeAll, describe, expect, it } from 'vitest';
import {
  createStateTable,
  keys,
  latestCapacityProbe,
  latestLeaderProbes,
  leaderObservationsSince,
  recordCapacityProbe,
  recordLeaderProbe,
  type StateTable,
} from '../../../adapters/state-table/index.ts';
import { classifyLeader } from '../../../core/leader/index.ts';
import { ensureTable } from '../../../dev/local/dynamodb.ts';
import type { BackendRef } from './backends.ts';

const now = new Date('2026-05-01T00:00:00Z');
const at = (s: number) => new Date(now.getTime() + s * 1000);

/** Leader and capacity probe records in the state table, on a DynamoDB implementation (./backends.ts). */
export function probeRecordsSuite(backend: BackendRef): void {
  let table: StateTable;
  beforeAll(async () => {
    await ensureTable(backend().client, 'records');
    table = createStateTable({ client: backend().client, tableName: 'records' });
  });

  async function observe(pool: string, s: number, holder?: string) {
    const observation = {
      observedAt: at(s).toISOString(),
      holder,
      renewTime: holder ? at(s - 1).toISOString() : undefined,
    };
    await recordLeaderProbe(
      table,
      { clusterId: 'c1', nodePool: pool, observation, classification: classifyLeader([observation], at(s)) },
      at(s),
    );
  }

  describe('probe records', () => {
    it('keeps each pool’s observations apart, even when one pool name prefixes another', async () => {
      await observe('edge', 0, 'n1');
      await observe('edge-b', 1, 'n9');
      await observe('edge', 60, 'n2');
      const edge = await leaderObservationsSince(table, 'c1', 'edge', at(-10), at(61));
      expect(edge.map((o) => o.holder)).toEqual(['n1', 'n2']);
      expect(await leaderObservationsSince(table, 'c1', 'edge', at(30), at(61))).toHaveLength(1);
      const latest = await latestLeaderProbes(table, 'c1', at(61));
      expect(latest.map((r) => [r.nodePool, r.observation.holder, r.classification.state])).toEqual([
        ['edge', 'n2', 'healthy'],
        ['edge-b', 'n9', 'healthy'],
      ]);
    });

    it('stores capacity results per target, newest first, and refuses a bad target name', async () => {
      await recordCapacityProbe(table, 'local', { run: 1, missing: Number.NaN }, at(0));
      await recordCapacityProbe(table, 'local', { run: 2 }, at(10));
      await recordCapacityProbe(table, 'other', { run: 3 }, at(20));
      expect(await latestCapacityProbe(table, 'local', at(30))).toEqual({
        target: 'local',
        recordedAt: at(10).toISOString(),
        report: { run: 2 },
      });
      expect(await latestCapacityProbe(table, 'nothing-here', at(30))).toBeUndefined();
      expect(() => keys.capacityProbe('Bad Name', now)).toThrow(/capacity probe target/);
      expect(() => keys.probeLatest('c1', 'has#hash')).toThrow(/nodePool/);
    });
  });
}
