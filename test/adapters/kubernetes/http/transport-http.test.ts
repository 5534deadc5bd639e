import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKubeTransport, KubeApiError, type KubeTransport } from '../../../../adapters/kubernetes/http/index.ts';
import { type LocalCluster, startLocalCluster } from '../../../../dev/local/kube-api/index.ts';
import { startServer, type TestServer } from './fixtures.ts';

describe('transport over plain http', () => {
  let server: TestServer;
  let replies: Array<(res: http.ServerResponse) => void>;
  const transports: KubeTransport[] = [];
  const track = (t: KubeTransport) => {
    transports.push(t);
    return t;
  };
  let hung: http.ServerResponse[] = [];

  beforeAll(async () => {
    replies = [];
    server = await startServer({
      handler: (_req, res, seen) => {
        const reply = replies.shift();
        if (reply) return reply(res);
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            url: seen.url,
            body: seen.body,
            contentType: seen.headers['content-type'] ?? null,
            ua: seen.headers['user-agent'],
          }),
        );
      },
    });
  });
  afterAll(async () => {
    for (const t of transports) t.close();
    for (const r of hung) r.destroy();
    await server.close();
  });

  it('prefixes the server path, encodes the query (skipping undefined) and sends JSON bodies', async () => {
    const t = track(createKubeTransport({ server: `${server.url}/k8s/clusters/c1/` }, { userAgent: 'test-agent' }));
    const got = await t.request({
      method: 'POST',
      path: '/api/v1/namespaces/a%20b/configmaps',
      query: { fieldManager: 'x&y=z', dryRun: undefined, limit: 5, watch: false },
      body: { data: { k: 'v' } },
    });
    expect(got).toEqual({
      url: '/k8s/clusters/c1/api/v1/namespaces/a%20b/configmaps?fieldManager=x%26y%3Dz&limit=5&watch=false',
      body: '{"data":{"k":"v"}}',
      contentType: 'application/json',
      ua: 'test-agent',
    });
    const patched = await t.request<{ contentType: string }>({
      method: 'PATCH',
      path: '/x',
      body: [{ op: 'remove', path: '/a' }],
      contentType: 'application/json-patch+json',
    });
    expect(patched.contentType).toBe('application/json-patch+json');
    const plain = await t.request<{ contentType: string | null; body: string }>({ method: 'DELETE', path: '/x' });
    expect(plain).toMatchObject({ contentType: null, body: '' });
    expect(t.sent).toEqual({ total: 3, POST: 1, PATCH: 1, DELETE: 1 });
  });

  it('turns an empty 2xx body into {} and a non-JSON one into an error saying what came back', async () => {
    const t = track(createKubeTransport({ server: server.url }));
    replies.push((res) => res.writeHead(201).end());
    await expect(t.request({ method: 'PUT', path: '/x', body: {} })).resolves.toEqual({});
    replies.push((res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html>login page${'.'.repeat(300)}TAIL</html>`),
    );
    const err = (await t.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^GET \/x: expected a JSON response, got text\/html: "<html>login page\.+"$/);
    expect(err.message).not.toContain('TAIL');
  });

  it('keeps a non-Status error body as truncated text', async () => {
    const t = track(createKubeTransport({ server: server.url }));
    replies.push((res) =>
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`bad gateway ${'x'.repeat(10_000)}`),
    );
    const err = (await t.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e)) as KubeApiError;
    expect(err).toMatchObject({ name: 'KubeApiError', code: 502, reason: undefined });
    expect(typeof err.body).toBe('string');
    expect((err.body as string).length).toBeLessThanOrEqual(4097);
    expect(err.message.startsWith('GET /x: 502 : bad gateway xxx')).toBe(true);
  });

  it('aborts an in-flight request with the signal reason and closes its socket', async () => {
    const t = track(createKubeTransport({ server: server.url }));
    let closed = false;
    replies.push((res) => {
      hung.push(res);
      res.socket!.on('close', () => (closed = true));
    });
    const ctl = new AbortController();
    const pending = t.request({ method: 'GET', path: '/slow', signal: ctl.signal });
    await vi.waitFor(() => expect(hung).toHaveLength(1));
    const reason = new Error('caller gave up');
    ctl.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await vi.waitFor(() => expect(closed).toBe(true));
    hung = [];
    const sentBefore = t.sent.total;
    await expect(t.request({ method: 'GET', path: '/x', signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(t.sent.total).toBe(sentBefore);
  });

  it('rejects transport failures with the node error code', async () => {
    const s = http.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const { port } = s.address() as AddressInfo;
    await new Promise<void>((r) => s.close(() => r()));
    const t = track(createKubeTransport({ server: `http://127.0.0.1:${port}` }));
    await expect(t.request({ method: 'GET', path: '/x' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    replies.push((res) => res.socket!.destroy());
    const t2 = track(createKubeTransport({ server: server.url }));
    await expect(t2.request({ method: 'GET', path: '/x' })).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('refuses a relative or unescaped path and a non-http server', () => {
    const t = track(createKubeTransport({ server: server.url }));
    return Promise.all([
      expect(t.request({ method: 'GET', path: 'api/v1' })).rejects.toThrow(/path: expected an absolute API path/),
      expect(t.request({ method: 'GET', path: '/api/v1/namespaces/a b' })).rejects.toThrow(/unescaped characters/),
      expect(() => createKubeTransport({ server: 'unix:///var/run/k.sock' })).toThrow(
        'server: expected an http(s) URL',
      ),
    ]);
  });
});

describe('KubeApiError from the local API', () => {
  let cluster: LocalCluster;
  let t: KubeTransport;
  beforeAll(async () => {
    cluster = await startLocalCluster();
    t = createKubeTransport({ server: cluster.url });
  });
  afterAll(async () => {
    t?.close();
    await cluster?.stop();
  });

  it('404 NotFound', async () => {
    const err = (await t
      .request({ method: 'GET', path: '/api/v1/namespaces/default/configmaps/nope' })
      .catch((e: unknown) => e)) as KubeApiError;
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({
      code: 404,
      reason: 'NotFound',
      method: 'GET',
      path: '/api/v1/namespaces/default/configmaps/nope',
      body: { kind: 'Status', code: 404 },
    });
    expect(err.message).toBe(
      'GET /api/v1/namespaces/default/configmaps/nope: 404 NotFound: configmaps "nope" not found',
    );
  });

  it("a read that may find nothing (notFound: 'absent'): 404 resolves to undefined, every other error still rejects", async () => {
    const path = '/api/v1/namespaces/default/configmaps/maybe';
    await expect(t.request({ method: 'GET', path, notFound: 'absent' })).resolves.toBeUndefined();
    // Without the option a 404 is an error, as before.
    await expect(t.request({ method: 'GET', path })).rejects.toMatchObject({ code: 404, reason: 'NotFound' });
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'maybe' }, data: { a: '1' } };
    await t.request({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: cm });
    await expect(t.request({ method: 'GET', path, notFound: 'absent' })).resolves.toMatchObject({ data: { a: '1' } });
    // Only 404 is absence: a 400 (a bad field selector) still rejects with its Status.
    await expect(
      t.request({
        method: 'GET',
        path: '/api/v1/namespaces/default/configmaps',
        query: { fieldSelector: 'no-operator' },
        notFound: 'absent',
      }),
    ).rejects.toMatchObject({ code: 400 });
  });

  it('409 AlreadyExists and Conflict', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dup' }, data: { a: '1' } };
    const path = '/api/v1/namespaces/default/configmaps';
    const created = await t.request<{ metadata: { resourceVersion: string } }>({ method: 'POST', path, body: cm });
    await expect(t.request({ method: 'POST', path, body: cm })).rejects.toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      method: 'POST',
    });
    const stale = { ...cm, metadata: { name: 'dup', resourceVersion: created.metadata.resourceVersion } };
    await t.request({ method: 'PUT', path: `${path}/dup`, body: { ...stale, data: { a: '2' } } });
    await expect(
      t.request({ method: 'PUT', path: `${path}/dup`, body: { ...stale, data: { a: '3' } } }),
    ).rejects.toMatchObject({ code: 409, reason: 'Conflict', method: 'PUT' });
  });
});
