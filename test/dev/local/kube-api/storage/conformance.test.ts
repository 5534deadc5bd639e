/**
 * One behaviour suite for every Storage backend: the API layer above must not be able to tell them apart
 * (except for `backend`). One etcd serves the whole file; every test works under its own key prefix.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningEtcd, startEtcd } from '../../../../../dev/local/etcd/launch.ts';
import { createEtcdStorage } from '../../../../../dev/local/kube-api/storage/etcd.ts';
import { createMemoryStorage } from '../../../../../dev/local/kube-api/storage/memory.ts';
import {
  CompactedError,
  ConflictError,
  KeyExistsError,
  NotFoundError,
  type Storage,
  type StorageWatchEvent,
} from '../../../../../dev/local/kube-api/storage/types.ts';

let etcd: RunningEtcd | undefined;
afterAll(async () => {
  await etcd?.stop();
});

const backends: { name: string; open: () => Promise<Storage> }[] = [
  { name: 'memory', open: async () => createMemoryStorage() },
  {
    name: 'etcd',
    open: async () => {
      etcd ??= await startEtcd({ name: 'conformance' });
      return createEtcdStorage({ endpoints: [etcd.endpoint] });
    },
  },
];

const WAIT = { timeout: 10_000, interval: 5 };

interface Collected {
  events: StorageWatchEvent[];
  errors: Error[];
  stop(): void;
}

function collect(s: Storage, prefix: string, afterRevision: number): Collected {
  const events: StorageWatchEvent[] = [];
  const errors: Error[] = [];
  const handle = s.watch(
    prefix,
    afterRevision,
    (e) => events.push(e),
    (e) => errors.push(e),
  );
  return { events, errors, stop: () => handle.stop() };
}

/** Compact view of events for order assertions. */
const brief = (events: StorageWatchEvent[]) => events.map((e) => `${e.type} ${e.key} @${e.modRevision}`);

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the promise to reject');
}

describe.each(backends)('Storage conformance: $name', ({ name, open }) => {
  let s: Storage;
  let seq = 0;
  /** A fresh prefix per test so tests never see each other's keys. */
  const fresh = () => `/registry/conformance/t${++seq}/`;

  beforeAll(async () => {
    s = await open();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('reports its backend', () => {
    expect(s.backend).toBe(name);
  });

  it('creates, gets and refuses to create twice', async () => {
    const p = fresh();
    const before = await s.currentRevision();
    const created = await s.create(`${p}a`, { spec: { n: 1 } });
    expect(created).toEqual({ key: `${p}a`, value: { spec: { n: 1 } }, modRevision: before + 1 });
    expect(await s.currentRevision()).toBe(before + 1);

    const got = await s.get(`${p}a`);
    expect(got).toEqual(created);
    got!.value.spec = 'mutated by the caller';
    expect((await s.get(`${p}a`))!.value).toEqual({ spec: { n: 1 } });

    expect(await s.get(`${p}missing`)).toBeUndefined();
    const err = await rejection(s.create(`${p}a`, { spec: { n: 2 } }));
    expect(err).toBeInstanceOf(KeyExistsError);
    expect((err as KeyExistsError).key).toBe(`${p}a`);
    expect(await s.currentRevision()).toBe(before + 1);
  });

  it('updates by compare-and-swap on modRevision', async () => {
    const p = fresh();
    const v1 = await s.create(`${p}a`, { v: 1 });
    const v2 = await s.update(`${p}a`, { v: 2 }, v1.modRevision);
    expect(v2.modRevision).toBeGreaterThan(v1.modRevision);
    expect(await s.get(`${p}a`)).toEqual({ key: `${p}a`, value: { v: 2 }, modRevision: v2.modRevision });

    const stale = await rejection(s.update(`${p}a`, { v: 3 }, v1.modRevision));
    expect(stale).toBeInstanceOf(ConflictError);
    expect((stale as ConflictError).actualModRevision).toBe(v2.modRevision);
    expect((await s.get(`${p}a`))!.value).toEqual({ v: 2 });

    expect(await rejection(s.update(`${p}gone`, { v: 1 }, v1.modRevision))).toBeInstanceOf(NotFoundError);
    // An expected revision of 0 must not turn an update into a create.
    expect(await rejection(s.update(`${p}gone`, { v: 1 }, 0))).toBeInstanceOf(NotFoundError);
    expect(await s.get(`${p}gone`)).toBeUndefined();
  });

  it('deletes with and without compare-and-swap, returning the last value at the delete revision', async () => {
    const p = fresh();
    const a = await s.create(`${p}a`, { name: 'a' });
    const deleted = await s.delete(`${p}a`);
    expect(deleted.value).toEqual({ name: 'a' });
    expect(deleted.modRevision).toBe(a.modRevision + 1);
    expect(await s.currentRevision()).toBe(deleted.modRevision);
    expect(await s.get(`${p}a`)).toBeUndefined();
    expect(await rejection(s.delete(`${p}a`))).toBeInstanceOf(NotFoundError);

    const b1 = await s.create(`${p}b`, { v: 1 });
    const b2 = await s.update(`${p}b`, { v: 2 }, b1.modRevision);
    const stale = await rejection(s.delete(`${p}b`, b1.modRevision));
    expect(stale).toBeInstanceOf(ConflictError);
    expect((stale as ConflictError).actualModRevision).toBe(b2.modRevision);
    expect(await s.get(`${p}b`)).toBeDefined();

    const casDeleted = await s.delete(`${p}b`, b2.modRevision);
    expect(casDeleted).toEqual({ key: `${p}b`, value: { v: 2 }, modRevision: b2.modRevision + 1 });
    expect(await rejection(s.delete(`${p}b`, b2.modRevision))).toBeInstanceOf(NotFoundError);
  });

  it('lists exactly the keys under a prefix, sorted, at the current revision', async () => {
    const p = fresh();
    for (const k of ['pods/b/z', 'pods/ab/y', 'pods/a/x', 'pods/a', 'pods/a/w', 'podsx/a/v']) {
      await s.create(`${p}${k}`, { k });
    }
    const rev = await s.currentRevision();

    const a = await s.list(`${p}pods/a/`);
    expect(a.items.map((i) => i.key)).toEqual([`${p}pods/a/w`, `${p}pods/a/x`]);
    expect(a.revision).toBe(rev);
    expect(a.more).toBe(false);

    const all = await s.list(`${p}pods/`);
    expect(all.items.map((i) => i.key.slice(p.length))).toEqual([
      'pods/a',
      'pods/a/w',
      'pods/a/x',
      'pods/ab/y',
      'pods/b/z',
    ]);
    expect(all.items[1].value).toEqual({ k: 'pods/a/w' });

    const none = await s.list(`${p}nothing/`);
    expect(none).toEqual({ items: [], revision: rev, more: false });
  });

  it('paginates with limit/startAfterKey/atRevision, stable while others write', async () => {
    const p = fresh();
    const keys = Array.from({ length: 10 }, (_, i) => `${p}k${String(i).padStart(2, '0')}`);
    for (const k of keys) await s.create(k, { k, v: 0 });
    const snapshot = await s.list(p);
    expect(snapshot.items).toHaveLength(10);

    const first = await s.list(p, { limit: 3 });
    expect(first.items.map((i) => i.key)).toEqual(keys.slice(0, 3));
    expect(first.more).toBe(true);
    const pages = [first];
    let last = first;
    let round = 0;
    while (last.more) {
      // Writes between pages: updates of keys on both sides of the cursor, a delete, a new key in the middle.
      round++;
      await Promise.all([
        s.update(keys[9], { k: keys[9], v: round }, (await s.get(keys[9]))!.modRevision),
        s.update(keys[0], { k: keys[0], v: round }, (await s.get(keys[0]))!.modRevision),
        s.create(`${keys[4]}-new${round}`, { added: round }),
        round === 1 ? s.delete(keys[5]) : Promise.resolve(),
      ]);
      last = await s.list(p, {
        limit: 3,
        startAfterKey: last.items[last.items.length - 1].key,
        atRevision: first.revision,
      });
      expect(last.revision).toBe(first.revision);
      pages.push(last);
    }
    expect(pages.map((pg) => pg.more)).toEqual([true, true, true, false]);
    expect(pages.flatMap((pg) => pg.items)).toEqual(snapshot.items);

    expect((await s.list(p, { limit: 0 })).items).toHaveLength(10 + round - 1);
    expect(await s.list(p, { startAfterKey: `${p}zzz` })).toMatchObject({ items: [], more: false });
    // A continue key before the prefix does not leak keys from outside it.
    const fromBefore = await s.list(p, { startAfterKey: '/registry/', limit: 1 });
    expect(fromBefore.items.map((i) => i.key)).toEqual([keys[0]]);
  });

  it('reads a prefix as it was at a past revision', async () => {
    const p = fresh();
    const a1 = await s.create(`${p}a`, { v: 1 });
    await s.update(`${p}a`, { v: 2 }, a1.modRevision);
    await s.create(`${p}b`, { v: 1 });
    await s.delete(`${p}a`);
    const past = await s.list(p, { atRevision: a1.modRevision });
    expect(past.items).toEqual([{ key: `${p}a`, value: { v: 1 }, modRevision: a1.modRevision }]);
    expect(past.revision).toBe(a1.modRevision);
    expect((await s.list(p)).items.map((i) => i.key)).toEqual([`${p}b`]);
  });

  it('revisions strictly increase across keys and operations', async () => {
    const p = fresh();
    const seen: number[] = [await s.currentRevision()];
    const a = await s.create(`${p}a`, {});
    seen.push(a.modRevision);
    const b = await s.create(`${p}b`, {});
    seen.push(b.modRevision);
    seen.push((await s.update(`${p}a`, { x: 1 }, a.modRevision)).modRevision);
    seen.push((await s.delete(`${p}b`)).modRevision);
    seen.push((await s.create(`${p}b`, {})).modRevision);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBe(seen[i - 1] + 1);
    expect(await s.currentRevision()).toBe(seen[seen.length - 1]);

    const parallel = await Promise.all(Array.from({ length: 20 }, (_, i) => s.create(`${p}c${i}`, { i })));
    const revs = parallel.map((o) => o.modRevision).sort((x, y) => x - y);
    expect(new Set(revs).size).toBe(20);
    expect(revs[0]).toBeGreaterThan(seen[seen.length - 1]);
  });

  it('watch replays history after a revision in order, then streams live events', async () => {
    const p = fresh();
    const a = await s.create(`${p}a`, { v: 1 });
    const b = await s.create(`${p}b`, { v: 1 });
    const a2 = await s.update(`${p}a`, { v: 2 }, a.modRevision);
    const bGone = await s.delete(`${p}b`);
    await s.create(`${p.slice(0, -1)}x/outside`, {}); // shares the prefix without its trailing slash

    const w = collect(s, p, a.modRevision);
    await vi.waitFor(() => expect(w.events).toHaveLength(3), WAIT);
    expect(w.events).toEqual(
      [
        { type: 'put', key: `${p}b`, value: { v: 1 }, modRevision: b.modRevision, created: true },
        {
          type: 'put',
          key: `${p}a`,
          value: { v: 2 },
          prevValue: { v: 1 },
          modRevision: a2.modRevision,
          created: false,
        },
        { type: 'delete', key: `${p}b`, prevValue: { v: 1 }, modRevision: bGone.modRevision },
      ].map((e) => expect.objectContaining(e)),
    );
    expect(w.events[0].type === 'put' && w.events[0].prevValue).toBeFalsy();

    const c = await s.create(`${p}c`, { v: 1 });
    const cGone = await s.delete(`${p}c`);
    await vi.waitFor(() => expect(w.events).toHaveLength(5), WAIT);
    expect(brief(w.events.slice(3))).toEqual([`put ${p}c @${c.modRevision}`, `delete ${p}c @${cGone.modRevision}`]);
    expect(w.events[4]).toMatchObject({ type: 'delete', prevValue: { v: 1 } });
    expect(w.errors).toEqual([]);
    w.stop();
  });

  it('a watch started just before a burst of writes sees each exactly once, in revision order', async () => {
    const p = fresh();
    const from = await s.currentRevision();
    const w = collect(s, p, from);
    const written = await Promise.all(Array.from({ length: 30 }, (_, i) => s.create(`${p}k${i}`, { i })));
    await vi.waitFor(() => expect(w.events.length).toBeGreaterThanOrEqual(30), WAIT);
    const expected = written.map((o) => o.modRevision).sort((x, y) => x - y);
    expect(w.events.map((e) => e.modRevision)).toEqual(expected);
    w.stop();
  });

  it('watch delete events carry the value before the delete', async () => {
    const p = fresh();
    const from = await s.currentRevision();
    const w = collect(s, p, from);
    const x = await s.create(`${p}x`, { spec: { replicas: 3 }, status: { ready: 1 } });
    const x2 = await s.update(`${p}x`, { spec: { replicas: 3 }, status: { ready: 3 } }, x.modRevision);
    await s.delete(`${p}x`, x2.modRevision);
    await vi.waitFor(() => expect(w.events).toHaveLength(3), WAIT);
    expect(w.events[2]).toEqual({
      type: 'delete',
      key: `${p}x`,
      prevValue: { spec: { replicas: 3 }, status: { ready: 3 } },
      modRevision: x2.modRevision + 1,
    });
    w.stop();
  });

  it('compaction turns old lists and watches into CompactedError, keeps the present readable', async () => {
    const p = fresh();
    const r1 = (await s.create(`${p}a`, { v: 1 })).modRevision;
    const r2 = (await s.update(`${p}a`, { v: 2 }, r1)).modRevision;
    const r3 = (await s.update(`${p}a`, { v: 3 }, r2)).modRevision;
    await s.update(`${p}a`, { v: 4 }, r3);
    await s.compact(r3);

    const listErr = await rejection(s.list(p, { atRevision: r1 }));
    expect(listErr).toBeInstanceOf(CompactedError);
    expect(listErr).toMatchObject({ requested: r1, compactRevision: r3 });

    const old = collect(s, p, r1);
    await vi.waitFor(() => expect(old.errors).toHaveLength(1), WAIT);
    expect(old.errors[0]).toBeInstanceOf(CompactedError);
    expect(old.errors[0]).toMatchObject({ requested: r1, compactRevision: r3 });
    expect(old.events).toEqual([]);

    expect((await s.list(p)).items.map((i) => i.value)).toEqual([{ v: 4 }]);
    expect((await s.list(p, { atRevision: r3 })).items.map((i) => i.value)).toEqual([{ v: 3 }]);
    await s.compact(r2); // older than the current compaction: nothing to do, no error

    const recent = collect(s, p, r3);
    await vi.waitFor(() => expect(recent.events).toHaveLength(1), WAIT);
    expect(recent.events[0]).toMatchObject({ type: 'put', value: { v: 4 }, prevValue: { v: 3 } });
    expect(recent.errors).toEqual([]);
    recent.stop();
  });

  it('serves many concurrent watches, each with every event in order', async () => {
    const p = fresh();
    const from = await s.currentRevision();
    const watches = Array.from({ length: 60 }, (_, i) => collect(s, i % 2 ? p : `${p}even/`, from));
    const odd = watches.filter((_, i) => i % 2);
    const even = watches.filter((_, i) => i % 2 === 0);
    for (let i = 0; i < 20; i++) await s.create(`${p}${i % 2 ? 'odd' : 'even'}/${i}`, { i });
    await vi.waitFor(() => {
      for (const w of odd) expect(w.events).toHaveLength(20);
      for (const w of even) expect(w.events).toHaveLength(10);
    }, WAIT);
    const order = brief(odd[0].events);
    for (const w of odd) expect(brief(w.events)).toEqual(order);
    for (const w of even) expect(brief(w.events)).toEqual(order.filter((e) => e.includes('/even/')));
    for (const w of watches) {
      expect(w.errors).toEqual([]);
      w.stop();
    }
  });

  it('stop() ends delivery to that watch only', async () => {
    const p = fresh();
    const from = await s.currentRevision();
    const stopped = collect(s, p, from);
    const sentinel = collect(s, p, from);
    await s.create(`${p}1`, {});
    await vi.waitFor(() => expect(stopped.events).toHaveLength(1), WAIT);
    stopped.stop();
    stopped.stop(); // idempotent
    await s.create(`${p}2`, {});
    await s.create(`${p}3`, {});
    await vi.waitFor(() => expect(sentinel.events).toHaveLength(3), WAIT);
    expect(stopped.events).toHaveLength(1);
    expect(stopped.errors).toEqual([]);

    // Stopping before anything was delivered (right after watch()) delivers nothing, ever.
    const early = collect(s, p, from);
    early.stop();
    const later = collect(s, p, from);
    await vi.waitFor(() => expect(later.events).toHaveLength(3), WAIT);
    expect(early.events).toEqual([]);
    expect(early.errors).toEqual([]);
    sentinel.stop();
    later.stop();
  });

  it('close() ends open watches through onError and refuses later calls', async () => {
    const own = await open();
    const p = fresh();
    const a = await own.create(`${p}a`, {});
    const w = collect(own, p, a.modRevision - 1);
    await vi.waitFor(() => expect(w.events.length).toBeGreaterThan(0), WAIT);
    await own.close();
    await own.close(); // twice is fine
    expect(w.errors).toHaveLength(1);
    await expect(own.get(`${p}a`)).rejects.toThrow(/closed/);
    await expect(own.create(`${p}b`, {})).rejects.toThrow(/closed/);
    const late = collect(own, p, a.modRevision - 1);
    await vi.waitFor(() => expect(late.errors).toHaveLength(1), WAIT);
    expect(late.events).toEqual([]);
  });

  it('handles lists and watch replays larger than a 4 MiB gRPC message', async () => {
    const p = fresh();
    const from = await s.currentRevision();
    const blob = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 80; i++) await s.create(`${p}${String(i).padStart(3, '0')}`, { blob, i });
    const listed = await s.list(p);
    expect(listed.items).toHaveLength(80);
    expect(listed.items[79].value).toEqual({ blob, i: 79 });
    const w = collect(s, p, from);
    await vi.waitFor(() => expect(w.events).toHaveLength(80), WAIT);
    expect(w.errors).toEqual([]);
    w.stop();
  });
});
