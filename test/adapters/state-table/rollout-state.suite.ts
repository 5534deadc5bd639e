import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StateTable } from '../../../adapters/state-table/index.ts';
import {
  createRollout,
  createStateTable,
  getItem,
  keys,
  listRollouts,
  putItem,
  queryAll,
  RolloutConflictError,
  readClusterSnapshot,
  readRollout,
  readStoredRollout,
  saveClusterSnapshot,
  transitionRollout,
  writeRollout,
} from '../../../adapters/state-table/index.ts';
import { MEASURED_PROFILE } from '../../../core/cost/measured-profile.ts';
import type { ClusterProgress, RolloutState } from '../../../core/rollout/index.ts';
import { applyCommand, decide } from '../../../core/rollout/index.ts';
import { ensureTable } from '../../../dev/local/dynamodb.ts';
import { at, observation, rollout } from '../../core/rollout/world.ts';
import type { BackendRef } from './backends.ts';

const fresh = (id: string, clusters = 3): RolloutState => {
  const base = rollout(clusters);
  return { ...base, id, spec: { ...base.spec, id } };
};

/** `state` with cluster `index` moved on (as a tick that saw it healthy would). */
function withCluster(state: RolloutState, index: number, change: Partial<ClusterProgress>): RolloutState {
  const next = structuredClone(state);
  const c = next.clusters[index];
  if (!c) throw new Error(`no cluster ${index}`);
  Object.assign(c, change);
  return next;
}

interface Sent {
  command: string;
  sk: string;
}

/**
 * The table as the code under test sees it, recording every write (command and sort key) and failing the
 * writes `crash` picks, as if the function died there (the write never reaches the table).
 */
function instrumented(table: StateTable, crash: (w: Sent) => boolean = () => false) {
  const writes: Sent[] = [];
  const doc = {
    send: (
      command: { constructor: { name: string }; input: { Key?: { sk?: string }; Item?: { sk?: string } } },
      options?: unknown,
    ) => {
      const name = command.constructor.name;
      if (/^(Put|Update|Delete)Command$/.test(name)) {
        const w = { command: name, sk: String(command.input.Key?.sk ?? command.input.Item?.sk) };
        if (crash(w)) return Promise.reject(new Error(`crash at ${name} ${w.sk}`));
        writes.push(w);
      }
      return (table.doc.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
    },
  } as unknown as DynamoDBDocumentClient;
  return { table: { ...table, doc }, writes };
}

async function progressItems(table: StateTable, id: string) {
  return queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    ExpressionAttributeValues: { ':pk': `ROLLOUT#${id}`, ':p': 'PROGRESS#' },
    ConsistentRead: true,
  });
}

const candidatesOf = (item: Record<string, unknown>) => Object.keys(item).filter((k) => k.startsWith('P#'));

/** The rollout state item and cluster snapshots in the state table, on a DynamoDB implementation (./backends.ts). */
export function rolloutStateSuite(backend: BackendRef): void {
  let table: StateTable;
  beforeAll(async () => {
    await ensureTable(backend().client, 'rollout-store');
    table = createStateTable({ client: backend().client, tableName: 'rollout-store' });
  });

  describe('rollout state item', () => {
    // A race the backend must settle atomically (backends.ts, `atomic-conditional-writes`).
    it.skipIf(backend.gaps.has('atomic-conditional-writes'))(
      'of two concurrent transitions from the same version, exactly one wins, with all of its clusters',
      async () => {
        await createRollout(table, fresh('race'));
        const read = (await readStoredRollout(table, 'race'))!;
        expect(read.state.version).toBe(1);
        // Each changes another cluster: the loser's must not show through the winner's state.
        const paused = withCluster(applyCommand(read.state, { command: 'pause' }, at(1)).state, 0, {
          phase: 'Updating',
        });
        const aborted = withCluster(applyCommand(read.state, { command: 'abort' }, at(1)).state, 1, {
          phase: 'Failed',
        });
        const results = await Promise.allSettled([
          writeRollout(table, paused, read),
          writeRollout(table, aborted, read),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(RolloutConflictError);
        const winner = (won[0] as PromiseFulfilledResult<RolloutState>).value;
        const stored = (await readRollout(table, 'race'))!;
        expect(stored.version).toBe(2);
        expect(stored).toEqual(winner);
        expect(stored.clusters.map((c) => c.phase)).toEqual(
          winner.phase === 'Paused' ? ['Updating', 'Pending', 'Pending'] : ['Pending', 'Failed', 'Pending'],
        );
      },
    );

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

  describe('per-cluster progress items', () => {
    // Past the old single item's bound (836 clusters): what could not be stored before.
    const big = 900;

    it(`stores a rollout of ${big} clusters, re-reads it, and a transition of one cluster writes only that cluster`, async () => {
      const initial = fresh('big', big);
      await createRollout(table, initial);
      const read = (await readStoredRollout(table, 'big'))!;
      expect(read.state).toEqual({ ...initial, version: 1 });
      const state = (await getItem(table, keys.rollout('big')))!;
      // The state item holds counts, not clusters.
      expect(state.clusterPhases).toEqual({ Pending: big });
      expect(Buffer.byteLength(JSON.stringify(state))).toBeLessThan(2_000);

      const rec = instrumented(table);
      const next = withCluster(read.state, 7, { phase: 'Updating', wave: 1, startedAt: at(1).toISOString() });
      next.wave = 1;
      const written = await writeRollout(rec.table, next, read);
      const cluster = keys.rolloutProgress('big', read.state.clusters[7]!.id).sk;
      // The cluster's candidate, the state item (the commit), the candidate finalised.
      expect(rec.writes).toEqual([
        { command: 'UpdateCommand', sk: cluster },
        { command: 'PutCommand', sk: 'STATE' },
        { command: 'UpdateCommand', sk: cluster },
      ]);
      expect(await readRollout(table, 'big')).toEqual(written);
      expect((await getItem(table, keys.rollout('big')))!.clusterPhases).toEqual({ Pending: big - 1, Updating: 1 });
    }, 120_000);

    it("a finished cluster's progress item is the size the cost model assumes; the state item stays under 1 KB", async () => {
      // A 20-pool cluster through its wave to Succeeded, as the state machine writes it.
      await createRollout(table, fresh('measured', 12));
      let read = (await readStoredRollout(table, 'measured'))!;
      for (const ms of [1_000, 2_000, 3_000]) {
        const observed = read.state.clusters.filter((c) => c.phase === 'Updating' || c.phase === 'Soaking');
        const d = decide(
          read.state,
          observed.map((c) => observation(c.id, ms, 'healthy', true, 20)),
          at(ms),
        );
        await writeRollout(table, d.state, read);
        read = (await readStoredRollout(table, 'measured'))!;
      }
      expect(read.state.clusters[0]).toMatchObject({ phase: 'Succeeded', poolCount: 20, healthyPools: 20 });
      const [item] = await progressItems(table, 'measured');
      const bytes = Buffer.byteLength(JSON.stringify(item));
      const modelled = MEASURED_PROFILE.sizes?.rolloutProgressItemBytes ?? 0;
      expect(Math.abs(bytes - modelled) / modelled, `${bytes} bytes measured`).toBeLessThan(0.1);
      expect(Buffer.byteLength(JSON.stringify(await getItem(table, keys.rollout('measured'))))).toBeLessThan(1_024);
    });

    it('a newer observation time alone writes no cluster', async () => {
      await createRollout(table, fresh('observed'));
      const read = (await readStoredRollout(table, 'observed'))!;
      const rec = instrumented(table);
      const next = withCluster(applyCommand(read.state, { command: 'pause' }, at(1)).state, 0, {
        observedAt: at(1).toISOString(),
      });
      await writeRollout(rec.table, next, read);
      expect(rec.writes).toEqual([{ command: 'PutCommand', sk: 'STATE' }]);
    });

    it('a crash before the state write leaves the stored version whole; the candidates never count', async () => {
      await createRollout(table, fresh('crash-before'));
      const read = (await readStoredRollout(table, 'crash-before'))!;
      const crashing = instrumented(table, (w) => w.sk === 'STATE');
      const next = withCluster(read.state, 0, { phase: 'Updating' });
      await expect(writeRollout(crashing.table, next, read)).rejects.toThrow(/crash at PutCommand STATE/);
      // The candidate is in the item, and does not count.
      const [first] = await progressItems(table, 'crash-before');
      expect(candidatesOf(first!)).toHaveLength(1);
      const after = (await readStoredRollout(table, 'crash-before'))!;
      expect(after.state).toEqual(read.state);
      // It is for version 2, which a transition still in flight could commit: kept while the state is at 1.
      const again = withCluster(after.state, 0, { phase: 'Soaking' });
      await writeRollout(table, again, after);
      // Version 2 went to another token: now it can never count, and the cluster's next write removes it.
      const moved = (await readStoredRollout(table, 'crash-before'))!;
      expect(moved.progress.get(moved.state.clusters[0]!.id)?.garbage).toEqual(
        candidatesOf(first!).map((c) => c.slice(2)),
      );
      await writeRollout(table, withCluster(moved.state, 0, { phase: 'Succeeded' }), moved);
      const [cleaned] = await progressItems(table, 'crash-before');
      expect(candidatesOf(cleaned!)).toEqual([]);
      expect((await readRollout(table, 'crash-before'))!.clusters.map((c) => c.phase)).toEqual([
        'Succeeded',
        'Pending',
        'Pending',
      ]);
    });

    it('a crash after the state write counts the transition; the next one finalises it first', async () => {
      await createRollout(table, fresh('crash-after'));
      const read = (await readStoredRollout(table, 'crash-after'))!;
      let stateWritten = false;
      const crashing = instrumented(table, (w) => {
        if (w.sk === 'STATE') stateWritten = true;
        return stateWritten && w.command === 'UpdateCommand';
      });
      const next = withCluster(read.state, 1, { phase: 'Updating' });
      // The finalising writes fail; the transition is stored all the same.
      const written = await writeRollout(crashing.table, next, read);
      const mid = (await readStoredRollout(table, 'crash-after'))!;
      expect(mid.state).toEqual(written);
      expect(mid.progress.get(written.clusters[1]!.id)?.unfinalized).toBeDefined();
      // A transition of another cluster finalises the leftover before its own commit.
      const rec = instrumented(table);
      await writeRollout(rec.table, withCluster(mid.state, 2, { phase: 'Updating' }), mid);
      const [, second] = await progressItems(table, 'crash-after');
      expect(second).toMatchObject({ committedVersion: 2 });
      expect(candidatesOf(second!)).toEqual([]);
      expect(rec.writes.map((w) => w.sk)).toEqual([
        keys.rolloutProgress('crash-after', written.clusters[1]!.id).sk,
        keys.rolloutProgress('crash-after', written.clusters[2]!.id).sk,
        'STATE',
        keys.rolloutProgress('crash-after', written.clusters[2]!.id).sk,
      ]);
      expect((await readRollout(table, 'crash-after'))!.clusters.map((c) => c.phase)).toEqual([
        'Pending',
        'Updating',
        'Updating',
      ]);
    });

    it('a transition that writes after the state moved on loses, and its late candidates never count', async () => {
      await createRollout(table, fresh('late'));
      const stale = (await readStoredRollout(table, 'late'))!;
      // Two transitions go through while the stale one is still deciding.
      let read = stale;
      for (const index of [0, 1]) {
        await writeRollout(table, withCluster(read.state, index, { phase: 'Updating' }), read);
        read = (await readStoredRollout(table, 'late'))!;
      }
      await expect(writeRollout(table, withCluster(stale.state, 2, { phase: 'Failed' }), stale)).rejects.toThrow(
        RolloutConflictError,
      );
      const after = (await readStoredRollout(table, 'late'))!;
      expect(after.state.version).toBe(3);
      expect(after.state.clusters.map((c) => c.phase)).toEqual(['Updating', 'Updating', 'Pending']);
      expect(after.progress.get(after.state.clusters[2]!.id)?.garbage).toHaveLength(1);
    });

    it('a read that sees the rollout move on between its state item and its progress items reads again', async () => {
      await createRollout(table, fresh('moving'));
      const first = (await readStoredRollout(table, 'moving'))!;
      let moved: RolloutState | undefined;
      // The first Query goes out only after a transition (commit and finalisation) that the state read missed.
      const racing = {
        ...table,
        doc: {
          send: async (command: { constructor: { name: string } }, options?: unknown) => {
            if (command.constructor.name === 'QueryCommand' && !moved)
              moved = await writeRollout(table, withCluster(first.state, 0, { phase: 'Updating' }), first);
            return (table.doc.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
          },
        } as unknown as DynamoDBDocumentClient,
      };
      expect(await readRollout(racing, 'moving')).toEqual(moved);
    });

    it('reads a rollout stored in the old single-item format, and its next transition writes the new one', async () => {
      const old = { ...fresh('legacy'), version: 4 };
      await putItem(table, {
        Item: {
          ...keys.rollout('legacy'),
          id: 'legacy',
          phase: old.phase,
          version: 4,
          updatedAt: old.updatedAt,
          state: JSON.stringify(old),
        },
      });
      expect(await readRollout(table, 'legacy')).toEqual(old);
      const out = await transitionRollout(table, 'legacy', async (current) => ({
        ...applyCommand(withCluster(current, 0, { phase: 'Updating' }), { command: 'pause' }, at(2)),
        result: null,
      }));
      expect(out.state.version).toBe(5);
      const item = (await getItem(table, keys.rollout('legacy')))!;
      expect(item.layout).toBe('progress-items');
      expect(JSON.parse(String(item.state))).not.toHaveProperty('clusters');
      expect(await progressItems(table, 'legacy')).toHaveLength(3);
      expect(await readRollout(table, 'legacy')).toEqual(out.state);
    });
  });
}
