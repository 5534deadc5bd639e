import { describe, expect, it, vi } from 'vitest';
import { listPrefix, objectKey } from '../../../../../dev/local/kube-api/storage/keys.ts';
import { createMemoryStorage } from '../../../../../dev/local/kube-api/storage/memory.ts';
import { CompactedError, type StorageWatchEvent } from '../../../../../dev/local/kube-api/storage/types.ts';

describe('memory storage specifics', () => {
  it('compacts implicitly when the history ring overflows', async () => {
    const s = createMemoryStorage({ historyLimit: 3 });
    for (let i = 0; i < 6; i++) await s.create(`/k/${i}`, { i });
    // Revisions 1..6; only 4..6 are kept, so a watch after 2 (needing 3) is compacted, after 3 is not.
    const err = await new Promise<Error>((resolve) => s.watch('/k/', 2, () => undefined, resolve));
    expect(err).toBeInstanceOf(CompactedError);
    expect(err).toMatchObject({ requested: 2, compactRevision: 4 });
    const events: StorageWatchEvent[] = [];
    const h = s.watch(
      '/k/',
      3,
      (e) => events.push(e),
      () => undefined,
    );
    await new Promise((r) => setImmediate(r));
    expect(events.map((e) => e.modRevision)).toEqual([4, 5, 6]);
    h.stop();
    await expect(s.list('/k/', { atRevision: 2 })).rejects.toBeInstanceOf(CompactedError);
    expect((await s.list('/k/', { atRevision: 4 })).items.map((i) => i.key)).toEqual(['/k/0', '/k/1', '/k/2', '/k/3']);
    await s.close();
  });

  it('hands out copies: mutating a read value does not change what is stored', async () => {
    const s = createMemoryStorage();
    await s.create('/a', { n: 1 });
    const got = await s.get('/a');
    (got!.value as { n: number }).n = 99;
    expect((await s.get('/a'))!.value).toEqual({ n: 1 });
    await s.close();
  });

  it('shares one object below the top level and metadata between reads; in depth it is frozen', async () => {
    // The suite runs with the check on (vitest.config.ts): a reader that changes a shared part throws.
    expect(process.env.LOCAL_API_FREEZE_SHARED).toBe('1');
    const s = createMemoryStorage();
    const written = { metadata: { name: 'a', labels: { x: '1' } }, spec: { n: 1 } };
    await s.create('/a', written);
    const [first, second] = [(await s.get('/a'))!.value, (await s.get('/a'))!.value] as Array<Record<string, any>>;
    expect(first.spec).toBe(second.spec);
    expect(first.metadata).not.toBe(second.metadata);
    // What the API layer does to every read: stamp the top level and metadata; the other read keeps its own.
    first.metadata.resourceVersion = '7';
    first.kind = 'Pod';
    expect(second).toEqual({ metadata: { name: 'a', labels: { x: '1' } }, spec: { n: 1 } });
    expect(() => (first.spec.n = 2)).toThrow(TypeError);
    expect(() => (first.metadata.labels.x = '2')).toThrow(TypeError);
    expect((await s.list('/'))!.items[0]!.value).toEqual({
      metadata: { name: 'a', labels: { x: '1' } },
      spec: { n: 1 },
    });
    // The writer's own top level and metadata stay its own to stamp.
    (written.metadata as Record<string, unknown>).resourceVersion = '1';
    expect((await s.get('/a'))!.value).toEqual({ metadata: { name: 'a', labels: { x: '1' } }, spec: { n: 1 } });
    await s.close();
  });

  it('refuses, under the check, a value its JSON text would not read back as, naming where', async () => {
    const s = createMemoryStorage();
    await expect(s.create('/u', { metadata: { name: 'u' }, spec: { replicas: undefined } })).rejects.toThrow(
      '/u.spec.replicas is undefined',
    );
    await expect(s.create('/d', { metadata: { name: 'd', creationTimestamp: new Date(0) } })).rejects.toThrow(
      '/d.metadata.creationTimestamp is not a plain object',
    );
    await expect(s.create('/n', { spec: { items: [1, Number.NaN] } })).rejects.toThrow('/n.spec.items[1] is NaN');
    await s.close();
  });

  it('keeps delivery in revision order when a watcher writes from its callback', async () => {
    const s = createMemoryStorage();
    const first: number[] = [];
    const second: number[] = [];
    s.watch(
      '/',
      0,
      (e) => {
        first.push(e.modRevision);
        if (e.key === '/a') void s.create('/b', {});
      },
      () => undefined,
    );
    s.watch(
      '/',
      0,
      (e) => second.push(e.modRevision),
      () => undefined,
    );
    await new Promise((r) => setImmediate(r));
    await s.create('/a', {});
    await new Promise((r) => setImmediate(r));
    expect(first).toEqual([1, 2]);
    expect(second).toEqual([1, 2]);
    await s.close();
  });

  it('hands a live put the object written, unparsed, each watcher with its own top level and metadata', async () => {
    const s = createMemoryStorage();
    const seen: Array<Record<string, any>> = [];
    const seenPrev: Array<Record<string, any>> = [];
    for (let i = 0; i < 3; i++)
      s.watch(
        '/',
        0,
        (e) => {
          if (e.type !== 'put') return;
          const v = e.value as Record<string, any>;
          // What every consumer does: stamp its own apiVersion and resourceVersion.
          v.apiVersion = `v${i}`;
          v.metadata.resourceVersion = String(i);
          seen.push(v);
          const prev = e.prevValue as Record<string, any> | undefined;
          if (prev) {
            prev.metadata.resourceVersion = String(i);
            seenPrev.push(prev);
          }
        },
        () => undefined,
      );
    await new Promise((r) => setImmediate(r));
    const written = { metadata: { name: 'a', labels: { x: '1' } }, spec: { n: 1 } };
    const parse = vi.spyOn(JSON, 'parse');
    let created: Awaited<ReturnType<typeof s.create>>;
    try {
      created = await s.create('/a', written);
      // Nothing to parse: the watchers were handed the object written.
      expect(parse).toHaveBeenCalledTimes(0);
    } finally {
      parse.mockRestore();
    }
    expect(seen.map((v) => [v.apiVersion, v.metadata.resourceVersion, v.metadata.name, v.spec.n])).toEqual([
      ['v0', '0', 'a', 1],
      ['v1', '1', 'a', 1],
      ['v2', '2', 'a', 1],
    ]);
    expect(seen[0]!.spec).toBe(written.spec);
    // Neither the writer's object nor what is stored carries any watcher's stamps.
    expect(created.value).toBe(written);
    expect(written).toEqual({ metadata: { name: 'a', labels: { x: '1' } }, spec: { n: 1 } });
    expect((await s.get('/a'))!.value).toEqual({ metadata: { name: 'a', labels: { x: '1' } }, spec: { n: 1 } });

    // An update's previous value is parsed from its stored text, once for all three watchers.
    const parsePrev = vi.spyOn(JSON, 'parse');
    try {
      await s.update('/a', { metadata: { name: 'a' }, spec: { n: 2 } }, created.modRevision);
      expect(parsePrev).toHaveBeenCalledTimes(1);
    } finally {
      parsePrev.mockRestore();
    }
    expect(seen.slice(3).map((v) => [v.apiVersion, v.metadata.resourceVersion, v.spec.n])).toEqual([
      ['v0', '0', 2],
      ['v1', '1', 2],
      ['v2', '2', 2],
    ]);
    expect(seenPrev.map((v) => [v.metadata.resourceVersion, v.metadata.labels.x, v.spec.n])).toEqual([
      ['0', '1', 1],
      ['1', '1', 1],
      ['2', '1', 1],
    ]);
    await s.close();
  });

  it("hands an update's previous labels with the event, so a label-selected watch need not parse the previous value", async () => {
    const s = createMemoryStorage();
    const events: StorageWatchEvent[] = [];
    s.watch(
      '/',
      0,
      (e) => events.push(e),
      () => undefined,
    );
    await new Promise((r) => setImmediate(r));
    const created = await s.create('/c', { metadata: { name: 'c', labels: { tier: 'back' } } });
    const updated = await s.update('/c', { metadata: { name: 'c', labels: { tier: 'front' } } }, created.modRevision);
    await s.update('/c', { metadata: { name: 'c' } }, updated.modRevision);
    const puts = events.filter((e): e is Extract<StorageWatchEvent, { type: 'put' }> => e.type === 'put');
    expect(puts.map((e) => e.prevLabels)).toEqual([
      undefined,
      { labels: { tier: 'back' } },
      { labels: { tier: 'front' } },
    ]);
    await s.close();
  });

  it('replays a put from its stored text, so a late watcher sees the value as written, not as changed since', async () => {
    const s = createMemoryStorage();
    const written = { metadata: { name: 'b' }, spec: { n: 1 } };
    await s.create('/b', written);
    // The writer's top level and metadata are its own to stamp.
    (written as Record<string, any>).apiVersion = 'v9';
    const replayed = await new Promise<Record<string, any>>((resolve) => {
      const h = s.watch(
        '/',
        0,
        (e) => {
          if (e.type === 'put') {
            h.stop();
            resolve(e.value as Record<string, any>);
          }
        },
        () => undefined,
      );
    });
    expect(replayed).toEqual({ metadata: { name: 'b' }, spec: { n: 1 } });
    expect(replayed.spec).not.toBe(written.spec);
    await s.close();
  });

  it('leaves out entries a label hint rejects; limit and remaining count only the rest', async () => {
    const s = createMemoryStorage();
    for (let i = 0; i < 6; i++)
      await s.create(`/p/${i}`, { metadata: { name: `p${i}`, labels: { pool: i % 2 ? 'odd' : 'even' } } });
    await s.create('/p/unlabelled', { metadata: { name: 'u' } });
    const even = (labels: Record<string, string> | undefined) => labels?.pool === 'even';
    const all = await s.list('/p/', { labelHint: even });
    expect(all.items.map((i) => i.key)).toEqual(['/p/0', '/p/2', '/p/4']);
    const page = await s.list('/p/', { labelHint: even, limit: 2 });
    expect(page).toMatchObject({ more: true, remaining: 1 });
    expect(page.items.map((i) => i.key)).toEqual(['/p/0', '/p/2']);
    // Labels written later count, not the ones an entry was created with.
    const one = await s.get('/p/1');
    await s.update('/p/1', { metadata: { name: 'p1', labels: { pool: 'even' } } }, one!.modRevision);
    expect((await s.list('/p/', { labelHint: even })).items.map((i) => i.key)).toEqual([
      '/p/0',
      '/p/1',
      '/p/2',
      '/p/4',
    ]);
    // A past revision's values carry no kept labels: the hint lets them through for the caller to filter
    // (/p/1 was 'odd' then; nothing after /p/1 existed yet).
    const past = await s.list('/p/', { labelHint: even, atRevision: one!.modRevision });
    expect(past.items.map((i) => [i.key, (i.value as any).metadata.labels.pool])).toEqual([
      ['/p/0', 'even'],
      ['/p/1', 'odd'],
    ]);
    await s.close();
  });
});

describe('etcd key layout', () => {
  it.each([
    [{ group: '', resource: 'pods' }, 'default', 'x', '/registry/pods/default/x'],
    [{ group: '', resource: 'nodes' }, undefined, 'n1', '/registry/minions/n1'],
    [{ group: '', resource: 'services' }, 'ns', 's', '/registry/services/specs/ns/s'],
    [{ group: 'apps', resource: 'deployments' }, 'ns', 'd', '/registry/deployments/ns/d'],
    [
      { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
      undefined,
      'admin',
      '/registry/clusterroles/admin',
    ],
    [
      { group: 'coordination.k8s.io', resource: 'leases' },
      'kube-system',
      'yurthub',
      '/registry/leases/kube-system/yurthub',
    ],
    [
      { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' },
      undefined,
      'nodepools.apps.openyurt.io',
      '/registry/apiextensions.k8s.io/customresourcedefinitions/nodepools.apps.openyurt.io',
    ],
    [
      { group: 'apps.openyurt.io', resource: 'nodepools' },
      undefined,
      'edge-a',
      '/registry/apps.openyurt.io/nodepools/edge-a',
    ],
  ])('%o %s/%s → %s', (res, ns, name, key) => {
    expect(objectKey(res, ns, name)).toBe(key);
    expect(key.startsWith(listPrefix(res, ns))).toBe(true);
  });
});
