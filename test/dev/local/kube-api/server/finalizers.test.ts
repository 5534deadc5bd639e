import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../support/wait.ts';
import { backends, startTestCluster, type TestCluster } from './harness.ts';

describe.each(backends)('finalizers and owner-reference garbage collection on $name storage', (backend) => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backend);
    ns = await t.namespace('fin');
  });
  afterAll(() => t?.stop());
  const cm = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
  const gone = (path: string) => async () => (await t.raw('GET', path)).status === 404;

  it('keeps an object with finalizers until the last one is removed', async () => {
    await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'held', finalizers: ['example.com/a', 'example.com/b'] },
    });
    const del = await t.raw('DELETE', cm('held'));
    expect(del.status).toBe(200);
    expect(del.json.metadata.deletionTimestamp).toBeTruthy();
    const mid = await t.raw('PATCH', cm('held'), [{ op: 'remove', path: '/metadata/finalizers/0' }], {
      'Content-Type': 'application/json-patch+json',
    });
    expect(mid.status).toBe(200);
    expect(mid.json.metadata.finalizers).toEqual(['example.com/b']);
    const added = await t.raw(
      'PATCH',
      cm('held'),
      { metadata: { finalizers: ['example.com/b', 'example.com/new'] } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(added.status).toBe(422);
    const cur = (await t.raw('GET', cm('held'))).json;
    const last = await t.raw('PUT', cm('held'), { ...cur, metadata: { ...cur.metadata, finalizers: [] } });
    expect(last.status).toBe(200);
    expect((await t.raw('GET', cm('held'))).status).toBe(404);
  });

  const owned = async (owner: any, name: string, extra: object = {}) =>
    t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: {
        name,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid, ...extra },
        ],
      },
    });

  it('background deletion removes dependents after the owner', async () => {
    const owner = (await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'bg-owner' } })).json;
    await owned(owner, 'bg-child');
    await t.raw('DELETE', cm('bg-owner'), { propagationPolicy: 'Background' });
    expect((await t.raw('GET', cm('bg-owner'))).status).toBe(404);
    await waitFor(gone(cm('bg-child')), 10_000, 'configmap bg-child to be gone');
  });

  it('foreground deletion holds the owner until blocking dependents are gone', async () => {
    const owner = (await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'fg-owner' } })).json;
    await owned(owner, 'fg-child', { blockOwnerDeletion: true });
    const del = await t.raw('DELETE', cm('fg-owner'), { propagationPolicy: 'Foreground' });
    expect(del.json.metadata.finalizers).toContain('foregroundDeletion');
    expect(del.json.metadata.deletionTimestamp).toBeTruthy();
    await waitFor(gone(cm('fg-child')), 10_000, 'configmap fg-child to be gone');
    await waitFor(gone(cm('fg-owner')), 10_000, 'configmap fg-owner to be gone');
  });

  it('orphan deletion keeps dependents and strips their owner reference', async () => {
    const owner = (await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'or-owner' } })).json;
    await owned(owner, 'or-child');
    const del = await t.raw('DELETE', `${cm('or-owner')}?propagationPolicy=Orphan`);
    expect(del.json.metadata.finalizers).toContain('orphan');
    await waitFor(gone(cm('or-owner')), 10_000, 'configmap or-owner to be gone');
    const child = await t.raw('GET', cm('or-child'));
    expect(child.status).toBe(200);
    expect(child.json.metadata.ownerReferences).toBeUndefined();
  });

  it('dryRun delete leaves the object in place', async () => {
    await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'dry-del' } });
    const res = await t.raw('DELETE', `${cm('dry-del')}?dryRun=All`);
    expect(res.status).toBe(200);
    expect((await t.raw('GET', cm('dry-del'))).status).toBe(200);
  });

  it('deletecollection deletes what the selector matches', async () => {
    for (const [name, tier] of [
      ['dc-1', 'x'],
      ['dc-2', 'x'],
      ['dc-3', 'y'],
    ]) {
      await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name, labels: { tier } } });
    }
    const res = await t.raw('DELETE', `/api/v1/namespaces/${ns}/configmaps?labelSelector=tier%3Dx`);
    expect(res.status).toBe(200);
    expect(res.json.items.map((i: any) => i.metadata.name).sort()).toEqual(['dc-1', 'dc-2']);
    expect((await t.raw('GET', cm('dc-3'))).status).toBe(200);
  });
});
