import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startTestCluster, type TestCluster } from './harness.ts';

describe.each(backends)('list, selectors and pagination on $name storage', (backend) => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backend);
    ns = await t.namespace('list');
    for (let i = 0; i < 12; i++) {
      const labels: Record<string, string> = { idx: String(i), parity: i % 2 ? 'odd' : 'even' };
      if (i < 3) labels.special = 'yes';
      await t.objects.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${String(i).padStart(2, '0')}`, namespace: ns, labels },
      });
    }
  });
  afterAll(() => t?.stop());

  const names = (list: any) => list.items.map((i: any) => i.metadata.name);
  const path = () => `/api/v1/namespaces/${ns}/configmaps`;

  it('pages with limit/continue over one consistent snapshot', async () => {
    const first = await t.raw('GET', `${path()}?limit=5`);
    expect(names(first.json)).toHaveLength(5);
    expect(first.json.metadata.continue).toBeTruthy();
    const rv = first.json.metadata.resourceVersion;
    // A write between pages must not show up in later pages of the same list.
    await t.objects.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-99', namespace: ns } });
    const second = await t.raw('GET', `${path()}?limit=5&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(second.json.metadata.resourceVersion).toBe(rv);
    const third = await t.raw('GET', `${path()}?limit=5&continue=${encodeURIComponent(second.json.metadata.continue)}`);
    expect(third.json.metadata.continue).toBeUndefined();
    const all = [...names(first.json), ...names(second.json), ...names(third.json)];
    expect(all).toEqual(Array.from({ length: 12 }, (_, i) => `cm-${String(i).padStart(2, '0')}`));
    await t.raw('DELETE', `${path()}/cm-99`);
  });

  it('pages through client-node list with a label selector', async () => {
    const page1 = await t.objects.list(
      'v1',
      'ConfigMap',
      ns,
      undefined,
      undefined,
      undefined,
      undefined,
      'parity=odd',
      4,
    );
    expect(page1.items).toHaveLength(4);
    const page2 = await t.objects.list(
      'v1',
      'ConfigMap',
      ns,
      undefined,
      undefined,
      undefined,
      undefined,
      'parity=odd',
      4,
      page1.metadata?._continue,
    );
    expect(page2.items).toHaveLength(2);
    expect(page2.metadata?._continue).toBeFalsy();
  });

  it.each([
    ['parity=even,special', ['cm-00', 'cm-02']],
    ['special!=yes,parity==odd', ['cm-03', 'cm-05', 'cm-07', 'cm-09', 'cm-11']],
    ['idx in (1,2,3)', ['cm-01', 'cm-02', 'cm-03']],
    ['idx notin (0,1,2,3,4,5,6,7,8,9),parity', ['cm-10', 'cm-11']],
    ['!special,idx in (2,3)', ['cm-03']],
  ])('filters with labelSelector %s', async (selector, expected) => {
    const res = await t.raw('GET', `${path()}?labelSelector=${encodeURIComponent(selector)}`);
    expect(res.status).toBe(200);
    expect(names(res.json)).toEqual(expected);
  });

  it('filters with fieldSelector metadata.name and rejects unknown fields with 400', async () => {
    const res = await t.raw('GET', `${path()}?fieldSelector=metadata.name%3Dcm-04`);
    expect(names(res.json)).toEqual(['cm-04']);
    const bad = await t.raw('GET', `${path()}?fieldSelector=spec.nope%3Dx`);
    expect(bad.status).toBe(400);
    expect(bad.json.reason).toBe('BadRequest');
  });

  it('rejects a malformed label selector with 400', async () => {
    const res = await t.raw('GET', `${path()}?labelSelector=${encodeURIComponent('a in (b')}`);
    expect(res.status).toBe(400);
    expect(res.json.reason).toBe('BadRequest');
  });

  it('answers an expired continue token with 410 Expired', async () => {
    const first = await t.raw('GET', `${path()}?limit=2`);
    await t.objects.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bump', namespace: ns } });
    await t.cluster.storage.compact(await t.cluster.storage.currentRevision());
    const next = await t.raw('GET', `${path()}?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(next.status).toBe(410);
    expect(next.json).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
  });

  it('rejects a forged continue token with 400', async () => {
    const res = await t.raw('GET', `${path()}?limit=2&continue=not-a-token`);
    expect(res.status).toBe(400);
  });

  it('lists across namespaces', async () => {
    const res = await t.raw('GET', `/api/v1/configmaps?labelSelector=idx%3D7`);
    expect(res.json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([`${ns}/cm-07`]);
  });
});
