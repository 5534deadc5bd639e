import { beforeAll, describe, expect, it } from 'vitest';
import type { StateTable } from '../../../adapters/state-table/index.ts';
import {
  createRollout,
  createStateTable,
  listRollouts,
  RolloutConflictError,
  readClusterSnapshot,
  readRollout,
  saveClusterSnapshot,
  transitionRollout,
  writeRollout,
} from '../../../adapters/state-table/index.ts';
import type { RolloutState } from '../../../core/rollout/index.ts';
import { applyCommand } from '../../../core/rollout/index.ts';
import { ensureTable } from '../../../dev/local/dynamodb.ts';
import { at, rollout } from '../../core/rollout/world.ts';
import type { BackendRef } from './backends.ts';

const fresh = (id: string): RolloutState => ({ ...rollout(3), id, spec: { ...rollout(3).spec, id } });

/** The rollout state item and cluster snapshots in the state table, on a DynamoDB implementation (./backends.ts). */
export function rolloutStateSuite(backend: BackendRef): void {
  let table: StateTable;
  beforeAll(async () => {
    await ensureTable(backend().client, 'rollout-store');
    table = createStateTable({ client: backend().client, tableName: 'rollout-store' });
  });

  describe('rollout state item', () => {
    it('of two concurrent conditional writes from the same version, exactly one wins', async () => {
      const created = await createRollout(table, fresh('race'));
      expect(created.version).toBe(1);
      const paused = applyCommand(created, { command: 'pause' }, at(1)).state;
      const aborted = applyCommand(created, { command: 'abort' }, at(1)).state;
      const results = await Promise.allSettled([writeRollout(table, paused, 1), writeRollout(table, aborted, 1)]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(RolloutConflictError);
      const stored = await readRollout(table, 'race');
      expect(stored!.version).toBe(2);
      expect(stored!.phase).toBe((won[0] as PromiseFulfilledResult<RolloutState>).value.phase);
    });

    it('the loser of a transition re-reads and decides again from the winner state', async () => {
      await createRollout(table, fresh('redo'));
      const seen: Record<string, number[]> = { a: [], b: [] };
      // Both read version 1 before either writes.
      let arrived = 0;
      let release!: () => void;
      const bothRead = new Promise<void>((r) => (release = r));
      const run = (who: 'a' | 'b', command: 'pause' | 'abort') =>
        transitionRollout(table, 'redo', async (current) => {
          seen[who].push(current.version);
          if (seen[who].length === 1 && ++arrived === 2) release();
          if (seen[who].length === 1) await bothRead;
          try {
            const next = applyCommand(current, { command }, at(5));
            return { ...next, result: command };
          } catch {
            return { state: current, changed: false, result: 'refused' };
          }
        });
      const [a, b] = await Promise.all([run('a', 'pause'), run('b', 'abort')]);
      const attempts = [a.attempts, b.attempts].sort();
      expect(attempts).toEqual([1, 2]);
      const loserSaw = a.attempts === 2 ? seen.a : seen.b;
      expect(loserSaw).toEqual([1, 2]);
      const stored = await readRollout(table, 'redo');
      // pause then abort, or abort then (pause refused): either way one consistent history.
      expect(stored!.phase).toBe('Aborted');
      // Abort first leaves the pause refused (version 2); pause first is followed by the abort (version 3).
      expect(stored!.version).toBe(a.attempts === 2 ? 2 : 3);
    });

    it('indexes rollouts and lists the active ones', async () => {
      await createRollout(table, fresh('listed'));
      const active = await listRollouts(table, { activeOnly: true });
      expect(active.map((r) => r.id)).toContain('listed');
      expect(active.map((r) => r.id)).not.toContain('redo');
      const all = await listRollouts(table);
      expect(all.find((r) => r.id === 'redo')).toMatchObject({ phase: 'Aborted', active: false });
    });

    it('keeps the first snapshot of a pool and adds pools seen later', async () => {
      await saveClusterSnapshot(table, 'snap', 'c1', { a: { version: '0.1.0' } }, at(0));
      const merged = await saveClusterSnapshot(table, 'snap', 'c1', { a: { version: '0.2.0' }, b: {} }, at(1));
      expect(merged).toEqual({ a: { version: '0.1.0' }, b: {} });
      expect(await readClusterSnapshot(table, 'snap', 'c1')).toEqual(merged);
      expect(await readClusterSnapshot(table, 'snap', 'c2')).toBeUndefined();
    });
  });
}
