import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import {
  createKubeTransport,
  discovery,
  type KubeTransport,
  UnknownKindError,
} from '../../../../adapters/kubernetes/http/index.ts';
import { type LocalCluster, startLocalCluster } from '../../../../dev/local/kube-api/index.ts';
import { startServer } from './fixtures.ts';

const CRD_FILE = new URL('../../../../infra/crds/poolspirit.yaml', import.meta.url);

describe('discovery', () => {
  let cluster: LocalCluster;
  const transports: KubeTransport[] = [];
  const fresh = () => {
    const t = createKubeTransport({ server: cluster.url });
    transports.push(t);
    return t;
  };

  beforeAll(async () => {
    cluster = await startLocalCluster();
  });
  afterAll(async () => {
    for (const t of transports) t.close();
    await cluster?.stop();
  });

  it('builds paths for core, namespaced and cluster-scoped built-ins', async () => {
    const d = discovery(fresh());
    expect(await d.path({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'cm' })).toBe(
      '/api/v1/namespaces/ns/configmaps/cm',
    );
    expect(await d.path({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns' })).toBe(
      '/api/v1/namespaces/ns/configmaps',
    );
    expect(await d.path({ apiVersion: 'apps/v1', kind: 'Deployment' })).toBe('/apis/apps/v1/deployments');
    expect(
      await d.path({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'kube-system', name: 'dns' }, 'scale'),
    ).toBe('/apis/apps/v1/namespaces/kube-system/deployments/dns/scale');
    expect(await d.path({ apiVersion: 'v1', kind: 'Namespace', namespace: 'ignored', name: 'team-a' })).toBe(
      '/api/v1/namespaces/team-a',
    );
    expect(await d.resource('v1', 'Pod')).toEqual({ name: 'pods', namespaced: true, kind: 'Pod' });
    expect(await d.path({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a/b', name: 'c d' })).toBe(
      '/api/v1/namespaces/a%2Fb/configmaps/c%20d',
    );
  });

  it('refuses refs it cannot turn into a path', async () => {
    const d = discovery(fresh());
    await expect(d.path({ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm' })).rejects.toThrow(
      'namespace: ConfigMap "cm" is namespaced; expected a namespace',
    );
    await expect(d.path({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns' }, 'status')).rejects.toThrow(
      /needs an object name/,
    );
    await expect(d.resource('a/b/c', 'X')).rejects.toThrow(/^apiVersion: expected "v1" or "<group>\/<version>"/);
  });

  it('caches per transport and shares one fetch between concurrent lookups', async () => {
    const t = fresh();
    const kinds = ['ConfigMap', 'Secret', 'Pod', 'Service', 'Namespace'];
    await Promise.all(kinds.map((k) => discovery(t).resource('v1', k)));
    await discovery(t).path({ apiVersion: 'v1', kind: 'Secret', namespace: 'x' });
    expect(t.sent.GET).toBe(1);
    const other = fresh();
    await discovery(other).resource('v1', 'Pod');
    expect(other.sent.GET).toBe(1);
  });

  it('re-reads once on a miss, then names the unknown kind; subresources are not kinds', async () => {
    const t = fresh();
    const d = discovery(t);
    await d.resource('v1', 'ConfigMap');
    const err = await d.resource('v1', 'Gizmo').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownKindError);
    expect((err as Error).message).toBe('the server does not serve kind Gizmo in v1');
    expect(t.sent.GET).toBe(2);
    await expect(d.resource('apps/v1', 'Scale')).rejects.toThrow('the server does not serve kind Scale in apps/v1');
  });

  it('finds a CRD installed after the first miss, cluster-scoped, with its status subresource', async () => {
    const t = fresh();
    const d = discovery(t);
    const ref = { apiVersion: 'poolspirit.io/v1alpha1', kind: 'PoolSpirit', namespace: 'ignored', name: 'ps-1' };
    await expect(d.path(ref)).rejects.toThrow('the server does not serve kind PoolSpirit in poolspirit.io/v1alpha1');
    const crd = parse(await readFile(CRD_FILE, 'utf8'));
    await t.request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
    // Wait until the apiserver serves it (outside the cache under test).
    const probe = fresh();
    await vi.waitFor(() => probe.request({ method: 'GET', path: '/apis/poolspirit.io/v1alpha1' }), {
      timeout: 10_000,
      interval: 20,
    });
    const gets = t.sent.GET ?? 0;
    expect(await d.path(ref, 'status')).toBe('/apis/poolspirit.io/v1alpha1/poolspirits/ps-1/status');
    expect(await d.resource('poolspirit.io/v1alpha1', 'PoolSpirit')).toEqual({
      name: 'poolspirits',
      namespaced: false,
      kind: 'PoolSpirit',
    });
    expect(t.sent.GET! - gets).toBe(1); // the cached (empty) list missed, one re-read found it, then cached
  });

  it('passes on errors other than 404 and does not cache them', async () => {
    let failNext = true;
    const server = await startServer({
      handler: (_req, res) => {
        const status = failNext ? 500 : 200;
        failNext = false;
        const body =
          status === 500
            ? { kind: 'Status', reason: 'InternalError', message: 'etcd is sad' }
            : { kind: 'APIResourceList', resources: [{ name: 'deployments', namespaced: true, kind: 'Deployment' }] };
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      },
    });
    try {
      const t = createKubeTransport({ server: server.url });
      transports.push(t);
      await expect(discovery(t).resource('apps/v1', 'Deployment')).rejects.toMatchObject({
        code: 500,
        reason: 'InternalError',
      });
      expect(await discovery(t).resource('apps/v1', 'Deployment')).toEqual({
        name: 'deployments',
        namespaced: true,
        kind: 'Deployment',
      });
      expect(t.sent.GET).toBe(2);
    } finally {
      await server.close();
    }
  });
});
