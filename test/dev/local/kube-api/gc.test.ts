import { afterEach, describe, expect, it, vi } from 'vitest';
import { type GarbageCollector, startGarbageCollector } from '../../../../dev/local/kube-api/gc.ts';
import { FakeGcApi, obj } from './fake-gc-api.ts';

let gc: GarbageCollector | undefined;
afterEach(() => gc?.stop());

function start(api: FakeGcApi) {
  gc = startGarbageCollector(api, { retryDelayMs: 5 });
  return gc;
}

describe('garbage collector', () => {
  it('deletes dependents whose only owner was deleted (background)', async () => {
    const api = new FakeGcApi();
    const owner = api.create(obj('Deployment', 'web', { namespace: 'a' }));
    api.create(obj('Pod', 'web-1', { namespace: 'a', owners: [owner] }));
    api.create(obj('Pod', 'web-2', { namespace: 'a', owners: [owner] }));
    api.create(obj('Pod', 'other', { namespace: 'a' }));
    start(api);
    await gc!.idle();
    expect(api.names()).toEqual(['other', 'web', 'web-1', 'web-2']);
    await api.userDelete('web');
    await vi.waitFor(() => expect(api.names()).toEqual(['other']));
    expect(api.calls).toContain('delete web-1 Background');
  });

  it('only drops the missing owner from a dependent that still has a live owner', async () => {
    const api = new FakeGcApi();
    const a = api.create(obj('ConfigMap', 'a', { namespace: 'n' }));
    const b = api.create(obj('ConfigMap', 'b', { namespace: 'n' }));
    api.create(obj('Pod', 'shared', { namespace: 'n', owners: [a, b] }));
    start(api);
    await gc!.idle();
    await api.userDelete('a');
    await vi.waitFor(() =>
      expect(api.get('shared')?.metadata.ownerReferences?.map((r: { name: string }) => r.name)).toEqual(['b']),
    );
    expect(api.names()).toEqual(['b', 'shared']);
  });

  it('foreground: deletes dependents first, waits for blocking ones, then releases the owner', async () => {
    const api = new FakeGcApi();
    const owner = api.create(obj('Deployment', 'web', { namespace: 'a' }));
    const child = api.create(obj('Pod', 'child', { namespace: 'a', owners: [{ obj: owner, block: true }] }));
    api.create(obj('ConfigMap', 'grandchild', { namespace: 'a', owners: [{ obj: child, block: true }] }));
    api.create(obj('Pod', 'loose', { namespace: 'a', owners: [owner] }));
    start(api);
    await gc!.idle();
    await api.userDelete('web', 'Foreground');
    expect(api.get('web')?.metadata.deletionTimestamp).toBeTruthy();
    await vi.waitFor(() => expect(api.names()).toEqual([]));
    // The chain went bottom-up: the child was deleted in the foreground because it had its own dependent.
    expect(api.deleted.indexOf('grandchild')).toBeLessThan(api.deleted.indexOf('child'));
    expect(api.deleted.indexOf('child')).toBeLessThan(api.deleted.indexOf('web'));
    expect(api.calls).toContain('delete child Foreground');
  });

  it('foreground: a cycle of blocking owner references does not deadlock', async () => {
    const api = new FakeGcApi();
    const a = obj('ConfigMap', 'a', { namespace: 'n' });
    const b = obj('ConfigMap', 'b', { namespace: 'n', owners: [{ obj: a, block: true }] });
    a.metadata.ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: b.metadata.uid!, blockOwnerDeletion: true },
    ];
    api.create(a);
    api.create(b);
    start(api);
    await gc!.idle();
    await api.userDelete('a', 'Foreground');
    await vi.waitFor(() => expect(api.names()).toEqual([]));
  });

  it('foreground: an owner whose dependents do not block is released right away', async () => {
    const api = new FakeGcApi();
    const owner = api.create(obj('Deployment', 'web', { namespace: 'a' }));
    api.create(obj('Pod', 'p', { namespace: 'a', owners: [owner], finalizers: ['example.com/hold'] }));
    start(api);
    await gc!.idle();
    await api.userDelete('web', 'Foreground');
    await vi.waitFor(() => expect(api.get('web')).toBeUndefined());
    // The non-blocking dependent is being deleted but held by its own finalizer.
    await vi.waitFor(() => expect(api.get('p')?.metadata.deletionTimestamp).toBeTruthy());
  });

  it('orphan: strips the owner reference from dependents, then removes the finalizer', async () => {
    const api = new FakeGcApi();
    const owner = api.create(obj('Deployment', 'web', { namespace: 'a' }));
    const other = api.create(obj('Deployment', 'other', { namespace: 'a' }));
    api.create(obj('Pod', 'p1', { namespace: 'a', owners: [owner] }));
    api.create(obj('Pod', 'p2', { namespace: 'a', owners: [owner, other] }));
    start(api);
    await gc!.idle();
    await api.userDelete('web', 'Orphan');
    await vi.waitFor(() => expect(api.get('web')).toBeUndefined());
    expect(api.get('p1')?.metadata.ownerReferences).toEqual([]);
    expect(api.get('p2')?.metadata.ownerReferences?.map((r: { name: string }) => r.name)).toEqual(['other']);
    expect(api.names()).toEqual(['other', 'p1', 'p2']);
  });

  it('treats an owner in another namespace as missing, but accepts cluster-scoped owners', async () => {
    const api = new FakeGcApi();
    const foreign = api.create(obj('ConfigMap', 'foreign', { namespace: 'ns1' }));
    const node = api.create(obj('Node', 'node-1'));
    api.create(obj('Pod', 'cross-ns', { namespace: 'ns2', owners: [foreign] }));
    api.create(obj('Pod', 'on-node', { namespace: 'ns2', owners: [node] }));
    start(api);
    await vi.waitFor(() => expect(api.names()).toEqual(['foreign', 'node-1', 'on-node']));
  });

  it('collects dependents of owners that never existed, after confirming with a fresh list', async () => {
    const api = new FakeGcApi();
    start(api);
    await gc!.idle();
    const ghost = obj('Deployment', 'ghost', { namespace: 'a' });
    api.create(obj('Pod', 'orphaned', { namespace: 'a', owners: [ghost] }));
    await vi.waitFor(() => expect(api.get('orphaned')).toBeUndefined());
    expect(api.listCalls).toBe(2); // the initial sync and one confirmation
  });

  it('does not delete a dependent whose owner the watch has not delivered yet', async () => {
    const api = new FakeGcApi();
    start(api);
    await gc!.idle();
    const owner = api.create(obj('Deployment', 'late', { namespace: 'a' }), true);
    api.create(obj('Pod', 'dep', { namespace: 'a', owners: [owner] }));
    await vi.waitFor(() => expect(api.listCalls).toBe(2));
    await gc!.idle();
    expect(api.names()).toEqual(['dep', 'late']);
    expect(api.calls).toEqual([]);
  });

  it("does not trust a list taken before a dependent arrived to judge that dependent's owner", async () => {
    const api = new FakeGcApi();
    start(api);
    await gc!.idle();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const realList = api.listAll.bind(api);
    api.listAll = async () => {
      const snapshot = await realList();
      if (api.listCalls === 2) await gate; // hold the first confirmation list open
      return snapshot;
    };
    api.create(obj('Pod', 'd1', { namespace: 'a', owners: [obj('Deployment', 'ghost', { namespace: 'a' })] }));
    await vi.waitFor(() => expect(api.listCalls).toBe(2));
    // While that list is in flight: an owner the watch has not shown yet, and a dependent of it.
    const owner = api.create(obj('Deployment', 'late', { namespace: 'a' }), true);
    api.create(obj('Pod', 'd2', { namespace: 'a', owners: [owner] }));
    await new Promise((r) => setImmediate(r)); // one event-loop turn: the fake watch delivers d2
    release();
    await vi.waitFor(() => expect(api.get('d1')).toBeUndefined());
    await gc!.idle();
    expect(api.names()).toEqual(['d2', 'late']);
  });

  it('retries failed API calls', async () => {
    const api = new FakeGcApi();
    const owner = api.create(obj('Deployment', 'web', { namespace: 'a' }));
    api.create(obj('Pod', 'p', { namespace: 'a', owners: [owner] }));
    let failures = 2;
    const realDelete = api.deleteObject.bind(api);
    api.deleteObject = async (ref, p) => {
      if (ref.name === 'p' && failures-- > 0) throw Object.assign(new Error('boom'), { statusCode: 500 });
      return realDelete(ref, p);
    };
    start(api);
    await gc!.idle();
    await api.userDelete('web');
    await vi.waitFor(() => expect(api.names()).toEqual([]));
    expect(failures).toBe(-1);
  });
});
