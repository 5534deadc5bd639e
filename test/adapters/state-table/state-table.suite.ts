import { beforeEach, describe, expect, it } from 'vitest';
import type { BeginResult, ReconcileOutcome, StateTable } from '../../../adapters/state-table/index.ts';
import {
  acquireLease,
  beginReconcile,
  ClusterExistsError,
  claimEvent,
  createStateTable,
  deregisterCluster,
  getCluster,
  getItem,
  getItems,
  keys,
  LeaseLostError,
  listClusters,
  listPoolStates,
  readInvocationStart,
  readPoolState,
  recordOutcome,
  registerCluster,
  releaseLease,
  renewLease,
} from '../../../adapters/state-table/index.ts';
import { ensureTable } from '../../../dev/local/dynamodb.ts';
import type { BackendRef } from './backends.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

/**
 * The state table adapter against a DynamoDB implementation (./backends.ts): leases and their fencing tokens,
 * conditional writes, reconcile state within its write units, batch reads, TTL attributes, the cluster
 * registry and event dedupe. Each test gets a fresh table.
 */
export function stateTableSuite(backend: BackendRef): void {
  // Write units are judged where the backend computes them from the item, as DynamoDB does (./backends.ts).
  const writeUnitsGap = backend.gaps.has('consumed-write-units');
  // Races a backend must settle atomically (backends.ts): judged where it does.
  const atomicGap = backend.gaps.has('atomic-conditional-writes');
  let table: StateTable;
  let units: { op: string; units: number; outcome: string }[] = [];
  let tableCounter = 0;

  beforeEach(async () => {
    const name = `state-${++tableCounter}`;
    await ensureTable(backend().client, name);
    units = [];
    table = createStateTable({
      client: backend().client,
      tableName: name,
      onWriteUnits: (u, op, outcome) => units.push({ units: u, op, outcome }),
    });
  });

  describe('lease', () => {
    const key = keys.lease('rollout-r1');

    it('grants a free lease with token 1 and refuses a contender while held', async () => {
      const a = await acquireLease(table, key, 'a', 10_000, T0);
      expect(a.acquired).toBe(true);
      if (!a.acquired) return;
      expect(a.lease.token).toBe(1);
      const b = await acquireLease(table, key, 'b', 10_000, at(5_000));
      expect(b).toMatchObject({ acquired: false, heldBy: 'a', heldUntil: T0.getTime() + 10_000 });
    });

    it('lets a contender take an expired lease with a larger token, and fences the stale holder out', async () => {
      const a = await acquireLease(table, key, 'a', 10_000, T0);
      if (!a.acquired) throw new Error('a should hold');
      const b = await acquireLease(table, key, 'b', 10_000, at(10_000));
      if (!b.acquired) throw new Error('b should take the lapsed lease');
      expect(b.lease.token).toBe(2);
      await expect(renewLease(table, a.lease, 10_000, at(11_000))).rejects.toBeInstanceOf(LeaseLostError);
      await expect(releaseLease(table, a.lease)).rejects.toBeInstanceOf(LeaseLostError);
      // b is unaffected by a's attempts
      const c = await acquireLease(table, key, 'c', 10_000, at(12_000));
      expect(c).toMatchObject({ acquired: false, heldBy: 'b' });
    });

    it('renews only for the holder, and release keeps the token growing', async () => {
      const a = await acquireLease(table, key, 'a', 10_000, T0);
      if (!a.acquired) throw new Error('a should hold');
      const renewed = await renewLease(table, a.lease, 10_000, at(9_000));
      expect(renewed.until).toBe(T0.getTime() + 19_000);
      expect((await acquireLease(table, key, 'b', 10_000, at(15_000))).acquired).toBe(false);
      await releaseLease(table, renewed);
      const b = await acquireLease(table, key, 'b', 10_000, at(15_000));
      expect(b.acquired && b.lease.token).toBe(2);
    });

    it('sets a TTL on standalone lease items', async () => {
      await acquireLease(table, key, 'a', 10_000, T0, { keepItemForMs: 60_000 });
      const item = await getItem(table, key);
      expect(item?.expiresAt).toBe(Math.ceil((T0.getTime() + 70_000) / 1000));
    });

    it.skipIf(atomicGap)('lets exactly one of many concurrent contenders win', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => acquireLease(table, key, `c${i}`, 10_000, T0)),
      );
      expect(results.filter((r) => r.acquired)).toHaveLength(1);
    });
  });

  describe('reconcile state', () => {
    const target = { clusterId: 'c1', nodePool: 'edge-a' };
    const PROOF = {
      key: 'a1'.repeat(32),
      notAfter: '2027-01-15T12:00:00.000Z',
      caNotAfter: '2036-01-13T12:00:00.000Z',
    };

    it('keeps the last render’s PKI proof for the pool’s next pass, whichever outcomes come between', async () => {
      const pool = { clusterId: 'c1', nodePool: 'edge-proof' };
      const pass = async (record: Omit<Parameters<typeof recordOutcome>[3], 'durationMs'>, t: number) => {
        const begun = await beginReconcile(table, pool, `inv-${t}`, 30_000, at(t));
        if (begun.status !== 'acquired') throw new Error(begun.status);
        await recordOutcome(table, begun.lease, begun.previous, { durationMs: 1, ...record }, at(t + 1));
        return begun.previous;
      };
      expect((await pass({ outcome: 'applied', pkiProof: PROOF }, 10)).pkiProof).toBeUndefined();
      expect((await pass({ outcome: 'error', error: new Error('x') }, 20)).pkiProof).toEqual(PROOF);
      expect((await pass({ outcome: 'unchanged' }, 30)).pkiProof).toEqual(PROOF);
      const renewed = { ...PROOF, key: 'b2'.repeat(32) };
      await pass({ outcome: 'applied', pkiProof: renewed }, 40);
      expect((await readPoolState(table, pool.clusterId, pool.nodePool))?.pkiProof).toEqual(renewed);
    });

    it.skipIf(writeUnitsGap)(
      'costs exactly 2 write units for a reconcile: acquire+dedupe, outcome+release',
      async () => {
        const begun = await beginReconcile(table, target, 'inv-1', 30_000, T0, 'ev-1');
        if (begun.status !== 'acquired') throw new Error(begun.status);
        expect(begun.previous).toMatchObject({ attempts: 0, failures: 0, recentEvents: [] });
        await recordOutcome(
          table,
          begun.lease,
          begun.previous,
          {
            outcome: 'applied',
            observedGeneration: 3,
            desiredHash: 'h'.repeat(64),
            durationMs: 12.4,
            eventId: 'ev-1',
            pkiProof: PROOF,
          },
          at(100),
        );
        expect(units).toEqual([
          { op: 'update', units: 1, outcome: 'ok' },
          { op: 'update', units: 1, outcome: 'ok' },
        ]);
        const state = await readPoolState(table, 'c1', 'edge-a');
        expect(state).toMatchObject({
          outcome: 'applied',
          observedGeneration: 3,
          attempts: 1,
          failures: 0,
          durationMs: 12,
          recentEvents: ['ev-1'],
          updatedAt: at(100).toISOString(),
        });
        const item = await getItem(table, keys.pool('c1', 'edge-a'));
        expect(item?.leaseOwner).toBeUndefined();
        expect(item?.fencingToken).toBe(1);
      },
    );

    it.skipIf(writeUnitsGap)(
      'keeps the item within 1 write unit even with a long error and a full event window',
      async () => {
        const longId = (i: number) => `0123abcd-4567-89ef-0123-${String(i).padStart(12, '0')}`;
        for (let i = 0; i < 6; i++) {
          const begun = await beginReconcile(table, target, `inv-${'x'.repeat(36)}-${i}`, 30_000, at(i * 1000), {
            id: longId(i),
            acceptedAt: T0.getTime() + i * 1000,
          });
          if (begun.status !== 'acquired') throw new Error(begun.status);
          await recordOutcome(
            table,
            begun.lease,
            begun.previous,
            {
              outcome: i === 5 ? 'error' : 'applied',
              observedGeneration: 12345,
              desiredHash: 'h'.repeat(64),
              durationMs: 123456,
              eventId: longId(i),
              error: new Error('e'.repeat(5000)),
              // passStartedAt and servedFrom (decision 0026) are on the item too.
              passStartedAt: begun.passStartedAt,
            },
            at(i * 1000 + 10),
          );
        }
        expect(units.every((u) => u.units === 1)).toBe(true);
        const state = await readPoolState(table, 'c1', 'edge-a');
        expect(state?.recentEvents).toHaveLength(4);
        expect(state?.lastError?.length).toBeLessThanOrEqual(200);
      },
    );

    it('refuses a duplicate event id once its reconcile completed', async () => {
      const begun = await beginReconcile(table, target, 'inv-1', 30_000, T0, 'ev-1');
      if (begun.status !== 'acquired') throw new Error(begun.status);
      await recordOutcome(
        table,
        begun.lease,
        begun.previous,
        { outcome: 'unchanged', durationMs: 1, eventId: 'ev-1' },
        T0,
      );
      expect(await beginReconcile(table, target, 'inv-2', 30_000, at(1), 'ev-1')).toEqual({ status: 'duplicate' });
      expect((await beginReconcile(table, target, 'inv-3', 30_000, at(2), 'ev-2')).status).toBe('acquired');
    });

    describe('an event a later pass already served', () => {
      const event = (id: string, acceptedAtMs: number) => ({ id, acceptedAt: T0.getTime() + acceptedAtMs });
      const complete = async (begun: BeginResult, outcome: ReconcileOutcome, atMs: number) => {
        if (begun.status !== 'acquired') throw new Error(`expected to take the lease, got ${begun.status}`);
        return recordOutcome(
          table,
          begun.lease,
          begun.previous,
          { outcome, durationMs: 1, passStartedAt: begun.passStartedAt },
          at(atMs),
        );
      };

      it('is refused without a write once a completed pass took the lease after its time and the margin', async () => {
        await complete(
          await beginReconcile(table, target, 'inv-1', 30_000, at(10_000), event('ev-1', 9_000)),
          'applied',
          10_100,
        );
        units = [];
        // Accepted 8.0 s in: the pass at 10.0 s began more than EVENT_TIME_UNCERTAINTY_MS (2 s) after it.
        expect(await beginReconcile(table, target, 'inv-2', 30_000, at(20_000), event('ev-2', 7_999))).toEqual({
          status: 'served',
          by: 'completed-pass',
          passStartedAt: T0.getTime() + 10_000,
        });
        expect(units.filter((u) => u.outcome === 'ok')).toEqual([]);
        // Within the margin (the second it names may have ended after the pass began): it runs.
        expect((await beginReconcile(table, target, 'inv-3', 30_000, at(20_000), event('ev-3', 8_000))).status).toBe(
          'acquired',
        );
      });

      // Only a completed pass serves: a failed one's event is retried, a requeued one's comes back.
      it.each(['error', 'requeued'] as const)('is not served by a pass whose outcome was %s', async (outcome) => {
        await complete(
          await beginReconcile(table, target, 'inv-1', 30_000, at(10_000), event('ev-1', 9_000)),
          outcome,
          10_100,
        );
        expect((await beginReconcile(table, target, 'inv-2', 30_000, at(11_000), event('ev-2', 1_000))).status).toBe(
          'acquired',
        );
      });

      it('is served by a live holder that took the lease after it, without asking that holder for another pass', async () => {
        const holder = await beginReconcile(table, target, 'inv-1', 30_000, at(10_000), event('ev-1', 9_000));
        expect(await beginReconcile(table, target, 'inv-2', 30_000, at(10_500), event('ev-2', 5_000))).toEqual({
          status: 'served',
          by: 'running-pass',
          passStartedAt: T0.getTime() + 10_000,
        });
        expect((await complete(holder, 'unchanged', 11_000)).requeue).toBe(false);
        // A newer event (within the margin of the holder's start) still asks the holder for a pass.
        const next = await beginReconcile(table, target, 'inv-3', 30_000, at(12_000), event('ev-3', 11_000));
        expect(await beginReconcile(table, target, 'inv-4', 30_000, at(12_500), event('ev-4', 11_000))).toMatchObject({
          status: 'locked',
          heldBy: 'inv-3',
        });
        expect((await complete(next, 'unchanged', 13_000)).requeue).toBe(true);
      });

      it('leaves passes without an event time (later passes, requests without one) to run', async () => {
        await complete(
          await beginReconcile(table, target, 'inv-1', 30_000, at(10_000), event('ev-1', 9_000)),
          'applied',
          10_100,
        );
        expect((await beginReconcile(table, target, 'inv-2', 30_000, at(11_000))).status).toBe('acquired');
      });

      it("is seen, with the cluster's registration, by the one read an invocation starts with", async () => {
        const before = { BatchGetItem: backend().requests('BatchGetItem'), GetItem: backend().requests('GetItem') };
        // Nothing yet: not served, and no registration (the invocation ends before any write).
        expect(await readInvocationStart(table, target, T0.getTime(), at(0))).toEqual({
          served: undefined,
          registration: undefined,
        });
        await registerCluster(table, { id: 'c1', access: { kind: 'url', url: 'http://127.0.0.1:1' } }, T0);
        await complete(
          await beginReconcile(table, target, 'inv-1', 30_000, at(10_000), event('ev-1', 9_000)),
          'applied',
          10_100,
        );
        const start = await readInvocationStart(table, target, T0.getTime() + 7_999, at(20_000));
        expect(start.served).toEqual({ status: 'served', by: 'completed-pass', passStartedAt: T0.getTime() + 10_000 });
        expect(start.registration).toMatchObject({ id: 'c1', access: { kind: 'url', url: 'http://127.0.0.1:1' } });
        // Within the margin: not served, so the invocation goes on to take the lease.
        expect((await readInvocationStart(table, target, T0.getTime() + 8_000, at(20_000))).served).toBeUndefined();
        // Each look is one BatchGetItem and no GetItem.
        const calls = (op: keyof typeof before) => backend().requests(op) - before[op];
        expect(calls('BatchGetItem')).toBe(3);
        expect(calls('GetItem')).toBe(0);
      });
    });

    describe('getItems', () => {
      it('returns each asked key in order, undefined where there is no item', async () => {
        await registerCluster(table, { id: 'c2', access: { kind: 'url', url: 'http://127.0.0.1:1' } }, T0);
        const items = await getItems(table, [keys.cluster('nope'), keys.cluster('c2'), keys.pool('c2', 'x')]);
        expect(items.map((i) => i?.id)).toEqual([undefined, 'c2', undefined]);
      });
    });

    it('lets an event whose reconcile failed run again, counting consecutive failures', async () => {
      let begun = await beginReconcile(table, target, 'inv-1', 30_000, T0, 'ev-1');
      if (begun.status !== 'acquired') throw new Error(begun.status);
      await recordOutcome(
        table,
        begun.lease,
        begun.previous,
        {
          outcome: 'error',
          durationMs: 1,
          eventId: 'ev-1',
          error: new Error('boom: Authorization: Bearer abc.def k8s-aws-v1.aHR0cHM6Ly9zdHM'),
        },
        T0,
      );
      begun = await beginReconcile(table, target, 'inv-2', 30_000, at(1), 'ev-1');
      if (begun.status !== 'acquired') throw new Error(`expected a retry to run, got ${begun.status}`);
      expect(begun.previous.failures).toBe(1);
      expect(begun.previous.lastError).toBe('boom: Authorization: Bearer [redacted] [redacted token]');
      await recordOutcome(
        table,
        begun.lease,
        begun.previous,
        { outcome: 'applied', durationMs: 1, eventId: 'ev-1' },
        at(2),
      );
      expect(await readPoolState(table, 'c1', 'edge-a')).toMatchObject({
        failures: 0,
        attempts: 2,
        lastError: undefined,
      });
    });

    it('reports a held lease as locked and asks the holder for one more pass', async () => {
      const first = await beginReconcile(table, target, 'inv-1', 30_000, T0, 'ev-1');
      if (first.status !== 'acquired') throw new Error(first.status);
      expect(await beginReconcile(table, target, 'inv-2', 30_000, at(10), 'ev-2')).toMatchObject({
        status: 'locked',
        heldBy: 'inv-1',
      });
      const done = await recordOutcome(
        table,
        first.lease,
        first.previous,
        { outcome: 'applied', durationMs: 1 },
        at(20),
      );
      expect(done.requeue).toBe(true);
      const again = await beginReconcile(table, target, 'inv-1b', 30_000, at(30));
      if (again.status !== 'acquired') throw new Error(again.status);
      expect(
        (await recordOutcome(table, again.lease, again.previous, { outcome: 'unchanged', durationMs: 1 }, at(40)))
          .requeue,
      ).toBe(false);
    });

    it('does not pass a requeue asked of a lapsed holder on to the next holder (it reads the cluster afresh)', async () => {
      const stale = await beginReconcile(table, target, 'inv-1', 1_000, T0);
      if (stale.status !== 'acquired') throw new Error(stale.status);
      expect((await beginReconcile(table, target, 'inv-2', 1_000, at(10))).status).toBe('locked');
      const next = await beginReconcile(table, target, 'inv-3', 1_000, at(1_000));
      if (next.status !== 'acquired') throw new Error(next.status);
      expect(
        (await recordOutcome(table, next.lease, next.previous, { outcome: 'applied', durationMs: 1 }, at(1_100)))
          .requeue,
      ).toBe(false);
    });

    it('rejects the outcome of a stale holder whose lease lapsed and was taken over', async () => {
      const stale = await beginReconcile(table, target, 'inv-1', 1_000, T0, 'ev-1');
      if (stale.status !== 'acquired') throw new Error(stale.status);
      const fresh = await beginReconcile(table, target, 'inv-2', 1_000, at(1_000), 'ev-2');
      if (fresh.status !== 'acquired') throw new Error(fresh.status);
      expect(fresh.lease.token).toBe(stale.lease.token + 1);
      await expect(
        recordOutcome(
          table,
          stale.lease,
          stale.previous,
          { outcome: 'applied', durationMs: 1, desiredHash: 'old' },
          at(1_100),
        ),
      ).rejects.toBeInstanceOf(LeaseLostError);
      await recordOutcome(
        table,
        fresh.lease,
        fresh.previous,
        { outcome: 'unchanged', durationMs: 1, desiredHash: 'new' },
        at(1_200),
      );
      expect((await readPoolState(table, 'c1', 'edge-a'))?.desiredHash).toBe('new');
    });

    it("gives a gone pool a TTL and clears it when the pool is back; lists a cluster's pools", async () => {
      for (const [pool, outcome] of [
        ['edge-a', 'gone'],
        ['edge-b', 'applied'],
      ] as const) {
        const begun = await beginReconcile(table, { clusterId: 'c1', nodePool: pool }, 'inv', 30_000, T0);
        if (begun.status !== 'acquired') throw new Error(begun.status);
        await recordOutcome(table, begun.lease, begun.previous, { outcome, durationMs: 1 }, T0);
      }
      expect((await getItem(table, keys.pool('c1', 'edge-a')))?.expiresAt).toBe(T0.getTime() / 1000 + 7 * 24 * 3600);
      const begun = await beginReconcile(table, target, 'inv', 30_000, at(1));
      if (begun.status !== 'acquired') throw new Error(begun.status);
      await recordOutcome(table, begun.lease, begun.previous, { outcome: 'applied', durationMs: 1 }, at(2));
      expect((await getItem(table, keys.pool('c1', 'edge-a')))?.expiresAt).toBeUndefined();
      const pools = await listPoolStates(table, 'c1');
      expect(pools.map((p) => [p.clusterId, p.nodePool, p.outcome])).toEqual([
        ['c1', 'edge-a', 'applied'],
        ['c1', 'edge-b', 'applied'],
      ]);
    });
  });

  describe('cluster registry', () => {
    it('registers, lists by label, replaces keeping createdAt, and deregisters', async () => {
      await registerCluster(
        table,
        { id: 'c1', access: { kind: 'url', url: 'http://127.0.0.1:1234' }, labels: { env: 'dev' } },
        T0,
      );
      await registerCluster(
        table,
        {
          id: 'c2',
          access: {
            kind: 'eks',
            clusterName: 'prod-1',
            region: 'eu-west-1',
            endpoint: 'https://x.eks.amazonaws.com',
            caData: 'AAAA',
          },
          labels: { env: 'prod' },
        },
        T0,
      );
      expect((await listClusters(table)).map((c) => c.id)).toEqual(['c1', 'c2']);
      expect((await listClusters(table, { env: 'prod' })).map((c) => c.id)).toEqual(['c2']);
      const replaced = await registerCluster(
        table,
        { id: 'c1', access: { kind: 'kubeconfig-file', path: '/tmp/k' } },
        at(5_000),
      );
      expect(replaced).toMatchObject({ createdAt: T0.toISOString(), updatedAt: at(5_000).toISOString(), labels: {} });
      expect((await getCluster(table, 'c1'))?.access).toEqual({ kind: 'kubeconfig-file', path: '/tmp/k' });
      await expect(
        registerCluster(table, { id: 'c1', access: { kind: 'url', url: 'http://127.0.0.1:1' } }, T0, {
          createOnly: true,
        }),
      ).rejects.toBeInstanceOf(ClusterExistsError);
      expect(await deregisterCluster(table, 'c1')).toBe(true);
      expect(await deregisterCluster(table, 'c1')).toBe(false);
      expect(await getCluster(table, 'c1')).toBeUndefined();
    });

    it('names the bad field of an invalid registration', async () => {
      await expect(registerCluster(table, { id: 'C_1', access: { kind: 'url', url: 'http://x' } }, T0)).rejects.toThrow(
        /^invalid cluster registration: id: expected a DNS label/,
      );
      await expect(
        registerCluster(
          table,
          {
            id: 'c1',
            access: { kind: 'eks', clusterName: 'x', region: 'nowhere', endpoint: 'https://x', caData: 'AA' },
          },
          T0,
        ),
      ).rejects.toThrow(/access\.region: expected an AWS region/);
      await expect(
        registerCluster(table, { id: 'c1', access: { kind: 'url', url: 'http://x', token: 'abc' } as never }, T0),
      ).rejects.toThrow(/access: Unrecognized key: "token"/);
      await expect(registerCluster(table, { id: 'c1', access: { kind: 'ftp' } as never }, T0)).rejects.toThrow(
        /access\.kind/,
      );
    });
  });

  describe('event dedupe records', () => {
    it('claims an id once within its window, again after it lapsed', async () => {
      expect(await claimEvent(table, 'ev-1', T0, 60_000)).toBe(true);
      expect(await claimEvent(table, 'ev-1', at(59_000), 60_000)).toBe(false);
      expect(await claimEvent(table, 'ev-1', at(60_000), 60_000)).toBe(true);
    });
  });
}
