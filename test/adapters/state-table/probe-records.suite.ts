import { beforeAll, describe, expect, it } from 'vitest';
import {
  clusterProbes,
  createStateTable,
  keys,
  latestCapacityProbe,
  latestLeaderProbes,
  latestProbeRun,
  recordCapacityProbe,
  recordLeaderProbe,
  recordProbeRun,
  type StateTable,
} from '../../../adapters/state-table/index.ts';
import { putItem } from '../../../adapters/state-table/table.ts';
import { classifyLeader, type LeaderObservation } from '../../../core/leader/index.ts';
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

  async function observe(pool: string, s: number, holder?: string, recent: readonly LeaderObservation[] = []) {
    const observation = {
      observedAt: at(s).toISOString(),
      holder,
      renewTime: holder ? at(s - 1).toISOString() : undefined,
    };
    const classification = classifyLeader([...recent, observation], at(s));
    await recordLeaderProbe(
      table,
      { clusterId: 'c1', nodePool: pool, observation, classification, recent: [...recent, observation] },
      at(s),
    );
  }

  describe('probe records', () => {
    it('keeps each pool’s observations apart, even when one pool name prefixes another', async () => {
      await observe('edge', 0, 'n1');
      await observe('edge-b', 1, 'n9');
      const [first] = await latestLeaderProbes(table, 'c1', at(1));
      await observe('edge', 60, 'n2', first?.recent);
      const history = await clusterProbes(table, 'c1', at(-10), at(61));
      expect(history.map((p) => [p.pool, p.record.holder])).toEqual([
        ['edge', 'n1'],
        ['edge-b', 'n9'],
        ['edge', 'n2'],
      ]);
      expect(await clusterProbes(table, 'c1', at(30), at(61))).toHaveLength(1);
      const latest = await latestLeaderProbes(table, 'c1', at(61));
      expect(latest.map((r) => [r.nodePool, r.observation.holder, r.classification.state])).toEqual([
        ['edge', 'n2', 'healthy'],
        ['edge-b', 'n9', 'healthy'],
      ]);
      // The window of changes round-trips: what the next probe classifies from.
      expect(latest[0]?.recent.map((o) => [o.observedAt, o.holder])).toEqual([
        [at(0).toISOString(), 'n1'],
        [at(60).toISOString(), 'n2'],
      ]);
    });

    it('reads a latest record written before records carried their window as its own observation', async () => {
      await putItem(table, {
        Item: {
          ...keys.probeLatest('c-old', 'p'),
          clusterId: 'c-old',
          nodePool: 'p',
          observedAt: at(0).toISOString(),
          holder: 'n1',
          classification: { state: 'healthy', reason: 'r', transitionsLastHour: 0 },
        },
      });
      const [old] = await latestLeaderProbes(table, 'c-old', at(1));
      expect(old?.recent).toEqual([{ observedAt: at(0).toISOString(), holder: 'n1' }]);
    });

    it('keeps one run record per cluster, the last probe’s, and leaves it out once expired', async () => {
      const counts = { healthy: 2, 'no-leader': 1, stale: 0, flapping: 0 };
      await recordProbeRun(table, { clusterId: 'c1', probedAt: at(0).toISOString(), counts, written: 3 }, at(0));
      await recordProbeRun(table, { clusterId: 'c1', probedAt: at(300).toISOString(), counts, written: 0 }, at(300));
      expect(await latestProbeRun(table, 'c1', at(301))).toEqual({
        clusterId: 'c1',
        probedAt: at(300).toISOString(),
        counts,
        written: 0,
      });
      expect(await latestProbeRun(table, 'c1', new Date(at(300).getTime() + 8 * 24 * 3_600_000))).toBeUndefined();
      // The run record is not a pool's: the cluster's latest probes do not list it.
      expect((await latestLeaderProbes(table, 'c1', at(301))).map((r) => r.nodePool)).toEqual(['edge', 'edge-b']);
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
