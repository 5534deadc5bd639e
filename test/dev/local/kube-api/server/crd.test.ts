import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../support/wait.ts';
import { backends, expectApiError, startTestCluster, type TestCluster, WIDGET_CRD } from './harness.ts';

describe.each(backends)('CRDs and the status subresource on $name storage', (backend) => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backend);
    ns = await t.namespace('crd');
    await t.objects.create(structuredClone(WIDGET_CRD) as any);
  });
  afterAll(() => t?.stop());

  const widget = (name: string, spec: Record<string, unknown> = { color: 'red', size: 1 }) => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace: ns },
    spec,
  });

  it('marks the CRD Established with accepted names and serves its resource in discovery', async () => {
    const crd: any = await t.objects.read({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
    });
    const established = crd.status.conditions.find((c: any) => c.type === 'Established');
    expect(established.status).toBe('True');
    expect(crd.status.acceptedNames).toMatchObject({
      plural: 'widgets',
      kind: 'Widget',
      listKind: 'WidgetList',
      singular: 'widget',
    });
    const disco = await t.raw('GET', '/apis/example.com/v1');
    expect(disco.json.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'widgets', kind: 'Widget', namespaced: true, shortNames: ['wd'] }),
        expect.objectContaining({ name: 'widgets/status', verbs: ['get', 'patch', 'update'] }),
      ]),
    );
    const groups = await t.raw('GET', '/apis');
    expect(groups.json.groups.map((g: any) => g.name)).toContain('example.com');
  });

  it('drops status on create and ignores status changes through the main resource', async () => {
    const created: any = await t.custom.createNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: ns,
      plural: 'widgets',
      body: { ...widget('w1'), status: { ready: true } },
    });
    expect(created.status).toBeUndefined();
    expect(created.metadata.generation).toBe(1);
    const updated: any = await t.objects.replace({
      ...created,
      status: { ready: true },
      metadata: { ...created.metadata, labels: { a: 'b' } },
    });
    expect(updated.status).toBeUndefined();
    expect(updated.metadata.labels).toEqual({ a: 'b' });
    expect(updated.metadata.generation).toBe(1);
  });

  it('changes only status through /status, without bumping generation', async () => {
    const created: any = await t.objects.create(widget('w2'));
    const res = await t.raw('PUT', `/apis/example.com/v1/namespaces/${ns}/widgets/w2/status`, {
      ...created,
      spec: { color: 'blue', size: 9 },
      status: { ready: true, observedGeneration: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.json.status).toEqual({ ready: true, observedGeneration: 1 });
    expect(res.json.spec).toEqual({ color: 'red', size: 1 });
    expect(res.json.metadata.generation).toBe(1);
    const specChange: any = await t.objects.replace({ ...res.json, spec: { color: 'green', size: 1 } });
    expect(specChange.metadata.generation).toBe(2);
    expect(specChange.status).toEqual({ ready: true, observedGeneration: 1 });
  });

  it('validates custom resources against the CRD schema with 422 Invalid and causes', async () => {
    const err = await expectApiError(t.objects.create(widget('bad', { color: 'red', size: 0 })));
    expect(err.code).toBe(422);
    expect(err.reason).toBe('Invalid');
    expect(err.message).toMatch(/^Widget.example.com "bad" is invalid: /);
    expect(err.details.causes).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'spec.size' })]));
  });

  it('refuses an update without resourceVersion, as kube does for custom resources', async () => {
    const created: any = await t.objects.create(widget('unconditional'));
    const { resourceVersion, ...meta } = created.metadata;
    const res = await t.raw('PUT', `/apis/example.com/v1/namespaces/${ns}/widgets/unconditional`, {
      ...created,
      metadata: meta,
    });
    expect(resourceVersion).toBeTruthy();
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'widgets.example.com "unconditional" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
  });

  it('refuses strategic merge patches for custom resources with 415', async () => {
    await t.objects.create(widget('w3'));
    const res = await t.raw(
      'PATCH',
      `/apis/example.com/v1/namespaces/${ns}/widgets/w3`,
      { spec: { size: 2 } },
      {
        'Content-Type': 'application/strategic-merge-patch+json',
      },
    );
    expect(res.status).toBe(415);
    expect(res.json.reason).toBe('UnsupportedMediaType');
  });

  it("prints the CRD's additionalPrinterColumns in Table responses", async () => {
    await t.objects.create(widget('w4', { color: 'purple', size: 1 }));
    const res = await t.raw('GET', `/apis/example.com/v1/namespaces/${ns}/widgets`, undefined, {
      Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    expect(res.json.kind).toBe('Table');
    expect(res.json.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Color']);
    const row = res.json.rows.find((r: any) => r.cells[0] === 'w4');
    expect(row.cells[1]).toBe('purple');
  });

  it('deleting the CRD deletes its instances and stops serving it', async () => {
    const crd2 = structuredClone(WIDGET_CRD) as any;
    crd2.metadata.name = 'gadgets.example.com';
    crd2.spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' };
    await t.objects.create(crd2);
    await t.objects.create({
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g1', namespace: ns },
      spec: {},
    } as any);
    const del = await t.raw('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com');
    expect(del.status).toBe(200);
    await waitFor(
      async () =>
        (await t.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com')).status ===
        404,
      10_000,
      'the CRD to be gone',
    );
    expect((await t.raw('GET', `/apis/example.com/v1/namespaces/${ns}/gadgets`)).status).toBe(404);
    const keys = await t.cluster.storage.list('/registry/example.com/gadgets/');
    expect(keys.items).toHaveLength(0);
  });

  it('stores custom resources under /registry/<group>/<resource>/', async () => {
    await t.objects.create(widget('w5'));
    const stored = await t.cluster.storage.get(`/registry/example.com/widgets/${ns}/w5`);
    expect(stored?.value).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w5' } });
    expect((stored!.value as any).metadata.resourceVersion).toBeUndefined();
  });
});

describe.each(backends)('CRDs across restarts on $name storage', (backend) => {
  it('re-registers the CRDs found in storage when a cluster starts on it', async () => {
    const { startLocalCluster } = await import('../../../../../dev/local/kube-api/index.ts');
    const { storage, dispose } = await backend.create();
    try {
      const first = await startLocalCluster({ storage });
      const post = (url: string, path: string, body: unknown) =>
        fetch(url + path, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect(
        (await post(first.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', WIDGET_CRD)).status,
      ).toBe(201);
      expect(
        (
          await post(first.url, '/apis/example.com/v1/namespaces/default/widgets', {
            metadata: { name: 'kept' },
            spec: { color: 'red' },
          })
        ).status,
      ).toBe(201);
      await first.stop();

      const second = await startLocalCluster({ storage });
      try {
        const res = await fetch(`${second.url}/apis/example.com/v1/namespaces/default/widgets/kept`);
        expect(res.status).toBe(200);
        expect(((await res.json()) as any).spec.color).toBe('red');
      } finally {
        await second.stop();
      }
    } finally {
      await dispose();
    }
  });
});
