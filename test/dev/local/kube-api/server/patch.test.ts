import { PatchStrategy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, expectApiError, startTestCluster, type TestCluster, WIDGET_CRD } from './harness.ts';

describe.each(backends)('patches and server-side apply on $name storage', (backend) => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backend);
    ns = await t.namespace('patch');
    await t.objects.create(structuredClone(WIDGET_CRD) as any);
  });
  afterAll(() => t?.stop());

  const deployment = (name: string, containers: object[]) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers } },
    },
  });

  it('applies a JSON merge patch', async () => {
    await t.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'm', namespace: ns },
      data: { a: '1', b: '2' },
    } as any);
    const res = await t.raw(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/m`,
      { data: { a: null, c: '3' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ b: '2', c: '3' });
  });

  it('applies a JSON patch and reports a failed test op', async () => {
    await t.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'j', namespace: ns },
      data: { a: '1' },
    } as any);
    const ok = await t.raw(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/j`,
      [{ op: 'replace', path: '/data/a', value: '2' }],
      {
        'Content-Type': 'application/json-patch+json',
      },
    );
    expect(ok.json.data).toEqual({ a: '2' });
    const failed = await t.raw(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/j`,
      [{ op: 'test', path: '/data/a', value: 'nope' }],
      {
        'Content-Type': 'application/json-patch+json',
      },
    );
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(failed.json.kind).toBe('Status');
  });

  it('merges containers by name with a strategic merge patch', async () => {
    await t.objects.create(
      deployment('smp', [
        { name: 'a', image: 'a:1' },
        { name: 'b', image: 'b:1' },
      ]) as any,
    );
    const res = await t.raw(
      'PATCH',
      `/apis/apps/v1/namespaces/${ns}/deployments/smp`,
      { spec: { template: { spec: { containers: [{ name: 'b', image: 'b:2' }] } } } },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    );
    expect(res.status).toBe(200);
    expect(res.json.spec.template.spec.containers.map((c: any) => [c.name, c.image])).toEqual([
      ['a', 'a:1'],
      ['b', 'b:2'],
    ]);
    expect(res.json.metadata.generation).toBe(2);
  });

  it('a patch carrying a stale resourceVersion conflicts', async () => {
    const created: any = await t.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rvp', namespace: ns },
    } as any);
    await t.raw(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/rvp`,
      { data: { x: '1' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    const res = await t.raw(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/rvp`,
      { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { x: '2' } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    expect(res.status).toBe(409);
    expect(res.json.reason).toBe('Conflict');
  });

  it('server-side apply creates, records managedFields, and conflicts between managers', async () => {
    const body = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'ssa', namespace: ns },
      spec: { color: 'red', size: 1 },
    };
    const created: any = await t.objects.patch(
      body,
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(created.spec).toEqual({ color: 'red', size: 1 });
    expect(created.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: 'alice',
        operation: 'Apply',
        apiVersion: 'example.com/v1',
        fieldsType: 'FieldsV1',
      }),
    ]);

    const err = await expectApiError(
      t.objects.patch(
        { ...body, spec: { color: 'blue' } },
        undefined,
        undefined,
        'bob',
        false,
        PatchStrategy.ServerSideApply,
      ),
    );
    expect(err.code).toBe(409);
    expect(err.reason).toBe('Conflict');
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.color');
    expect(err.details.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.color' },
    ]);

    const forced: any = await t.objects.patch(
      { ...body, spec: { color: 'blue' } },
      undefined,
      undefined,
      'bob',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(forced.spec.color).toBe('blue');
    expect(forced.metadata.managedFields.map((m: any) => m.manager).sort()).toEqual(['alice', 'bob']);
  });

  it('a repeated identical apply writes nothing', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'idem', namespace: ns }, data: { k: 'v' } };
    const first: any = await t.objects.patch(
      body,
      undefined,
      undefined,
      'idem-mgr',
      false,
      PatchStrategy.ServerSideApply,
    );
    const second: any = await t.objects.patch(
      body,
      undefined,
      undefined,
      'idem-mgr',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
  });

  it('applies status through /status without touching spec', async () => {
    await t.objects.create({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'st', namespace: ns },
      spec: { color: 'red' },
    } as any);
    const res = await t.raw(
      'PATCH',
      `/apis/example.com/v1/namespaces/${ns}/widgets/st/status?fieldManager=controller`,
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'st' }, status: { ready: true } },
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    expect(res.status).toBe(200);
    expect(res.json.status).toEqual({ ready: true });
    expect(res.json.spec).toEqual({ color: 'red' });
    expect(res.json.metadata.generation).toBe(1);
  });

  it('non-apply writes update managedFields too', async () => {
    const res = await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps?fieldManager=writer`, {
      metadata: { name: 'mf' },
      data: { a: '1' },
    });
    expect(res.json.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'writer', operation: 'Update' }),
    ]);
  });
});

describe('the scale subresource', () => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster(backends[0]);
  });
  afterAll(() => t?.stop());

  it("reads and changes a Deployment's replicas through /scale", async () => {
    await t.raw('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'sc' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'sc' } },
        template: { metadata: { labels: { app: 'sc' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const scale = await t.raw('GET', '/apis/apps/v1/namespaces/default/deployments/sc/scale');
    expect(scale.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { replicas: 0, selector: 'app=sc' },
    });
    const patched = await t.raw(
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/sc/scale',
      { spec: { replicas: 4 } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(patched.json.spec.replicas).toBe(4);
    const deploy = await t.raw('GET', '/apis/apps/v1/namespaces/default/deployments/sc');
    expect(deploy.json.spec.replicas).toBe(4);
    expect(deploy.json.metadata.generation).toBe(2);
    const bad = await t.raw('PUT', '/apis/apps/v1/namespaces/default/deployments/sc/scale', {
      ...patched.json,
      spec: { replicas: -1 },
    });
    expect(bad.status).toBe(422);
    const stale = await t.raw('PUT', '/apis/apps/v1/namespaces/default/deployments/sc/scale', {
      ...scale.json,
      spec: { replicas: 2 },
    });
    expect(stale.status).toBe(409);
  });
});

describe('server-side apply ownership writes', () => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster(backends[0]);
  });
  afterAll(() => t?.stop());

  it('a second manager applying the same value becomes a co-owner (a write), then re-applies are no-ops', async () => {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'co', namespace: 'default' },
      data: { k: 'v' },
    };
    const first: any = await t.objects.patch(body, undefined, undefined, 'one', false, PatchStrategy.ServerSideApply);
    const shared: any = await t.objects.patch(body, undefined, undefined, 'two', false, PatchStrategy.ServerSideApply);
    expect(Number(shared.metadata.resourceVersion)).toBeGreaterThan(Number(first.metadata.resourceVersion));
    expect(shared.metadata.managedFields.map((m: any) => m.manager).sort()).toEqual(['one', 'two']);
    const mark = t.cluster.storage;
    const before = await mark.currentRevision();
    await t.objects.patch(body, undefined, undefined, 'two', false, PatchStrategy.ServerSideApply);
    expect(await mark.currentRevision()).toBe(before);
  });
});
