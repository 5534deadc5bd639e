/**
 * ObjectStore.update makes no copy of the current object for a PUT (its object replaces the current one and
 * never sees it). What a client sees must not move: field order, what a status or main-resource PUT may
 * change, no-op detection, conflicts, and the stored object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../support/wait.ts';
import { backends, startTestCluster, type TestCluster, WIDGET_CRD } from './harness.ts';

describe.each(backends)('update copies on $name storage', (backend) => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backend);
    ns = await t.namespace('copies');
  });
  afterAll(() => t?.stop());

  it('a status PUT keeps the status where it was among the fields, and changes only the status', async () => {
    // A Node keeps the status it is created with, in the order it was sent: before spec here.
    const created = await t.raw('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `copies-${process.pid}`, labels: { a: '1' } },
      status: { capacity: { cpu: '2' } },
      spec: { podCIDR: '10.1.0.0/24' },
    });
    expect(created.status).toBe(201);
    expect(Object.keys(created.json)).toEqual(['apiVersion', 'kind', 'metadata', 'status', 'spec']);
    const path = `/api/v1/nodes/${created.json.metadata.name}`;
    const put = await t.raw('PUT', `${path}/status`, {
      ...created.json,
      metadata: { ...created.json.metadata, labels: { a: 'ignored' } },
      spec: { podCIDR: 'ignored' },
      status: { capacity: { cpu: '4' } },
    });
    expect(put.status).toBe(200);
    expect(Object.keys(put.json)).toEqual(['apiVersion', 'kind', 'metadata', 'status', 'spec']);
    expect(put.json.status).toEqual({ capacity: { cpu: '4' } });
    expect(put.json.spec).toEqual(created.json.spec);
    expect(put.json.metadata.labels).toEqual({ a: '1' });
    const got = await t.raw('GET', path);
    expect(got.text).toBe(put.text);
    // The same status again is a no-op: no write, same resourceVersion.
    const again = await t.raw('PUT', `${path}/status`, put.json);
    expect(again.status).toBe(200);
    expect(again.json.metadata.resourceVersion).toBe(put.json.metadata.resourceVersion);
    // A status PUT without a status clears it.
    const { status: _status, ...withoutStatus } = put.json;
    const cleared = await t.raw('PUT', `${path}/status`, withoutStatus);
    expect(cleared.status).toBe(200);
    expect(Object.keys(cleared.json)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    // ...and a later one puts it back, last.
    const restored = await t.raw('PUT', `${path}/status`, { ...cleared.json, status: { capacity: { cpu: '1' } } });
    expect(Object.keys(restored.json)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect((await t.raw('DELETE', path)).status).toBe(200);
  });

  it('a status PUT on a custom resource created without status appends it', async () => {
    const crd = structuredClone(WIDGET_CRD) as any;
    crd.metadata.name = 'sprockets.example.com';
    crd.spec.names = { plural: 'sprockets', singular: 'sprocket', kind: 'Sprocket' };
    expect((await t.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    const base = `/apis/example.com/v1/namespaces/${ns}/sprockets`;
    await waitFor(async () => (await t.raw('GET', base)).status === 200, 10_000, 'sprockets to be served');
    const created = await t.raw('POST', base, {
      apiVersion: 'example.com/v1',
      kind: 'Sprocket',
      metadata: { name: 's' },
      status: { ready: true },
      spec: { color: 'red' },
    });
    expect(created.status).toBe(201);
    expect(created.json.status).toBeUndefined();
    const put = await t.raw('PUT', `${base}/s/status`, { ...created.json, status: { ready: true } });
    expect(put.status).toBe(200);
    expect(Object.keys(put.json)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect((await t.raw('GET', `${base}/s`)).text).toBe(put.text);
  });

  it('a PUT replaces the object: conflicts, no-ops and status handling are as before', async () => {
    const path = `/api/v1/namespaces/${ns}/pods`;
    const created = await t.raw('POST', path, {
      metadata: { name: 'p', labels: { a: '1' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    expect(created.status).toBe(201);
    // The same object again changes nothing.
    const same = await t.raw('PUT', `${path}/p`, created.json);
    expect(same.status).toBe(200);
    expect(same.text).toBe(created.text);
    // A PUT of the main resource cannot change the status.
    const put = await t.raw('PUT', `${path}/p`, {
      ...created.json,
      metadata: { ...created.json.metadata, labels: { a: '2' } },
      status: { phase: 'Running' },
    });
    expect(put.status).toBe(200);
    expect(put.json.metadata.labels).toEqual({ a: '2' });
    expect(put.json.status).toEqual(created.json.status);
    expect(Number(put.json.metadata.resourceVersion)).toBeGreaterThan(Number(created.json.metadata.resourceVersion));
    expect((await t.raw('GET', `${path}/p`)).text).toBe(put.text);
    // A stale resourceVersion is a conflict, and writes nothing.
    const stale = await t.raw('PUT', `${path}/p`, { ...created.json, metadata: { ...created.json.metadata } });
    expect(stale.status).toBe(409);
    expect((await t.raw('GET', `${path}/p`)).text).toBe(put.text);
  });
});
