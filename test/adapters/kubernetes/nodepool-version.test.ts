import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError } from '../../../adapters/kubernetes/http/index.ts';
import { createClusterClient, NodePoolNotServedError } from '../../../adapters/kubernetes/index.ts';

/**
 * A fake apiserver serving NodePool in the versions `served` lists (changeable mid-test, as when OpenYurt is
 * upgraded), with one pool `shop-1`; `failRead` answers its reads with a 500 (a failing conversion webhook).
 */
interface Fake {
  served: string[];
  preferred?: string;
  failRead?: boolean;
  /** The group's versions are served without NodePool in them (OpenYurt's other CRDs stayed). */
  kindless?: boolean;
  requests: string[];
}
let server: Server | undefined;

async function startFake(fake: Fake) {
  server = createServer((req, res) => {
    const url = req.url ?? '';
    fake.requests.push(url);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const notFound = () => send(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' });
    if (url === '/apis/apps.openyurt.io') {
      if (fake.served.length === 0) return notFound();
      const preferred = fake.preferred ?? fake.served[0];
      return send(200, {
        kind: 'APIGroup',
        name: 'apps.openyurt.io',
        versions: fake.served.map((v) => ({ groupVersion: `apps.openyurt.io/${v}`, version: v })),
        preferredVersion: { groupVersion: `apps.openyurt.io/${preferred}`, version: preferred },
      });
    }
    const m = /^\/apis\/apps\.openyurt\.io\/([^/?]+)(\/nodepools(?:\/([^/?]+))?)?/.exec(url);
    if (!m || !fake.served.includes(m[1] ?? '')) return notFound();
    if (!m[2]) {
      return send(200, {
        kind: 'APIResourceList',
        resources: fake.kindless
          ? [{ name: 'yurtappsets', namespaced: true, kind: 'YurtAppSet', verbs: ['get'] }]
          : [{ name: 'nodepools', namespaced: false, kind: 'NodePool', verbs: ['get', 'list'] }],
      });
    }
    if (fake.kindless) return notFound();
    if (fake.failRead) {
      return send(500, { kind: 'Status', code: 500, message: 'conversion webhook for apps.openyurt.io failed' });
    }
    const pool = { apiVersion: `apps.openyurt.io/${m[1]}`, kind: 'NodePool', metadata: { name: 'shop-1' } };
    if (m[3]) return m[3] === 'shop-1' ? send(200, pool) : notFound();
    return send(200, { kind: 'NodePoolList', metadata: {}, items: [{ metadata: pool.metadata }] });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { server: `http://127.0.0.1:${(server!.address() as AddressInfo).port}` };
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

const fast = { retry: { initialDelayMs: 1, maxDelayMs: 5, attemptTimeoutMs: 5_000, maxAttempts: 2 } };

describe('the NodePool version a cluster client reads', () => {
  it("reads the cluster's preferred version, and reads the group once for many calls", async () => {
    const fake: Fake = { served: ['v1beta1', 'v1alpha1'], requests: [] };
    const client = createClusterClient(await startFake(fake), { ...fast, clusterId: 'edge-1' });
    const groupReads = () => fake.requests.filter((u) => u === '/apis/apps.openyurt.io').length;
    expect((await client.getNodePool('shop-1'))?.apiVersion).toBe('apps.openyurt.io/v1beta1');
    expect((await client.listNodePools()).map((p) => p.apiVersion)).toEqual(['apps.openyurt.io/v1beta1']);
    expect((await client.getNodePool('shop-1'))?.apiVersion).toBe('apps.openyurt.io/v1beta1');
    expect(groupReads()).toBe(1);
    // An absent pool is believed once the version is confirmed still served: one more read of the group.
    expect(await client.getNodePool('gone')).toBeUndefined();
    expect(groupReads()).toBe(2);
  });

  it('reads the preferred v1beta2 of OpenYurt v1.7', async () => {
    const fake: Fake = { served: ['v1beta2', 'v1beta1', 'v1alpha1'], requests: [] };
    const client = createClusterClient(await startFake(fake), fast);
    expect((await client.getNodePool('shop-1'))?.apiVersion).toBe('apps.openyurt.io/v1beta2');
  });

  it('fails with NodePoolNotServedError naming the cluster and its versions, and reads no pool', async () => {
    const fake: Fake = { served: ['v1alpha1'], requests: [] };
    const client = createClusterClient(await startFake(fake), { ...fast, clusterId: 'edge-old' });
    const err = await client.getNodePool('shop-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodePoolNotServedError);
    expect((err as NodePoolNotServedError).served).toEqual(['v1alpha1']);
    expect((err as Error).message).toMatch(/^cluster edge-old serves apps\.openyurt\.io v1alpha1: pool-spirit reads/);
    expect(fake.requests).toEqual(['/apis/apps.openyurt.io']);
  });

  it('fails the same way on a cluster without OpenYurt', async () => {
    const fake: Fake = { served: [], requests: [] };
    const client = createClusterClient(await startFake(fake), { ...fast, clusterId: 'plain' });
    await expect(client.listNodePools()).rejects.toThrow(/^cluster plain does not serve apps\.openyurt\.io: /);
  });

  it("fails the same way where the group is served without NodePool (its CRD removed, OpenYurt's others kept)", async () => {
    const fake: Fake = { served: ['v1beta1', 'v1alpha1'], kindless: true, requests: [] };
    const client = createClusterClient(await startFake(fake), { ...fast, clusterId: 'edge-2' });
    const err = await client.getNodePool('shop-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodePoolNotServedError);
    expect((err as Error).message).toMatch(
      /^cluster edge-2 serves apps\.openyurt\.io v1beta1, v1alpha1 but no NodePool in apps\.openyurt\.io\/v1beta1: /,
    );
  });

  it('does not read a pool as gone when the NodePool CRD went away after the kinds were cached', async () => {
    const fake: Fake = { served: ['v1beta1', 'v1alpha1'], requests: [] };
    const client = createClusterClient(await startFake(fake), { ...fast, clusterId: 'edge-3' });
    expect((await client.getNodePool('shop-1'))?.apiVersion).toBe('apps.openyurt.io/v1beta1');
    fake.kindless = true;
    await expect(client.getNodePool('shop-1')).rejects.toThrow(
      /^cluster edge-3 serves apps\.openyurt\.io v1beta1, v1alpha1 but no NodePool in apps\.openyurt\.io\/v1beta1: /,
    );
  });

  it('reads the group again when the version in use stops being served', async () => {
    const fake: Fake = { served: ['v1beta2', 'v1beta1'], requests: [] };
    const client = createClusterClient(await startFake(fake), fast);
    expect((await client.getNodePool('shop-1'))?.apiVersion).toBe('apps.openyurt.io/v1beta2');
    fake.served = ['v1beta1'];
    expect((await client.getNodePool('shop-1'))?.apiVersion).toBe('apps.openyurt.io/v1beta1');
    expect(fake.requests.filter((u) => u === '/apis/apps.openyurt.io')).toHaveLength(2);
  });

  it('never reads a failing read (a conversion webhook down) as the pool being gone', async () => {
    const fake: Fake = { served: ['v1beta1'], failRead: true, requests: [] };
    const client = createClusterClient(await startFake(fake), fast);
    const err = await client.getNodePool('shop-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).code).toBe(500);
  });
});
