import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CLUSTER_CA_TTL_MS } from '../../../adapters/kubernetes/client.ts';
import type { ClusterConnection } from '../../../adapters/kubernetes/http/index.ts';
import { createClusterClient, FIELD_MANAGER, isTransient } from '../../../adapters/kubernetes/index.ts';

/** A scripted apiserver: answers discovery, and plays `script` for everything else in order. */
type Reply = { status: number; body?: unknown } | 'hang';
let server: Server | undefined;
const seen: { method: string; url: string; contentType?: string; body: string }[] = [];

async function startFake(script: Reply[]): Promise<ClusterConnection> {
  seen.length = 0;
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = req.url ?? '';
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (url === '/api/v1' || url.startsWith('/api/v1?')) {
      return send(200, {
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: [
          { name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'list', 'patch', 'create'] },
          { name: 'events', namespaced: true, kind: 'Event', verbs: ['create'] },
        ],
      });
    }
    seen.push({ method: req.method!, url, contentType: req.headers['content-type'], body });
    const next = script.shift() ?? { status: 500, body: { kind: 'Status', code: 500 } };
    if (next === 'hang') return; // never answers: the attempt timeout must fire
    send(next.status, next.body ?? { kind: 'Status', code: next.status, message: 'scripted' });
  };
  server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { server: `http://127.0.0.1:${(server!.address() as AddressInfo).port}` };
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

const caConfigMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'kube-root-ca.crt', namespace: 'kube-system' },
  data: { 'ca.crt': 'PEM' },
};
const fast = { retry: { initialDelayMs: 1, maxDelayMs: 5, attemptTimeoutMs: 10_000 } };

describe('kubernetes client', () => {
  it('retries 429, 500 and a timed-out attempt, then succeeds', async () => {
    const kc = await startFake([{ status: 429 }, 'hang', { status: 503 }, { status: 200, body: caConfigMap }]);
    // A short attempt timeout so the hanging attempt is abandoned quickly.
    const client = createClusterClient(kc, { retry: { ...fast.retry, attemptTimeoutMs: 1_000, maxAttempts: 4 } });
    expect(await client.readClusterCA()).toBe('PEM');
    expect(seen).toHaveLength(4);
    expect(client.counters).toMatchObject({ reads: 1, retries: 3 });
  });

  it('does not retry other 4xx, and maps 404 to undefined', async () => {
    let kc = await startFake([{ status: 403 }]);
    await expect(createClusterClient(kc, fast).readClusterCA()).rejects.toMatchObject({ code: 403 });
    expect(seen).toHaveLength(1);
    await new Promise<void>((r) => server!.close(() => r()));
    kc = await startFake([{ status: 404 }]);
    expect(await createClusterClient(kc, fast).readClusterCA()).toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  it('reads the cluster CA once per connection until CLUSTER_CA_TTL_MS, and never remembers a missing one', async () => {
    const missing = { status: 404 };
    const kc = await startFake([missing, { status: 200, body: caConfigMap }, { status: 200, body: caConfigMap }]);
    let clock = Date.parse('2026-12-01T00:00:00Z');
    const at = { ...fast, now: () => new Date(clock) };
    expect(await createClusterClient(kc, at).readClusterCA()).toBeUndefined();
    expect(await createClusterClient(kc, at).readClusterCA()).toBe('PEM');
    // Later invocations' clients over the same connection ask nothing.
    const later = createClusterClient(kc, at);
    clock += CLUSTER_CA_TTL_MS - 1;
    expect(await later.readClusterCA()).toBe('PEM');
    expect(seen).toHaveLength(2);
    expect(later.counters.reads).toBe(0);
    clock += 1;
    expect(await createClusterClient(kc, at).readClusterCA()).toBe('PEM');
    expect(seen).toHaveLength(3);
    // Another connection to the same server reads its own.
    const other = { ...kc };
    await expect(createClusterClient(other, fast).readClusterCA()).rejects.toMatchObject({ code: 500 });
  });

  it('gives up after maxAttempts and surfaces the last error', async () => {
    const kc = await startFake([{ status: 500 }, { status: 500 }, { status: 500 }]);
    await expect(
      createClusterClient(kc, { retry: { ...fast.retry, maxAttempts: 3 } }).readClusterCA(),
    ).rejects.toMatchObject({ code: 500 });
    expect(seen).toHaveLength(3);
  });

  it('applies with server-side apply, one field manager and force', async () => {
    const kc = await startFake([{ status: 200, body: caConfigMap }]);
    await createClusterClient(kc, fast).apply(caConfigMap);
    expect(seen[0].method).toBe('PATCH');
    expect(seen[0].contentType).toBe('application/apply-patch+yaml');
    const query = new URL(seen[0].url, 'http://x').searchParams;
    expect(query.get('fieldManager')).toBe(FIELD_MANAGER);
    expect(query.get('force')).toBe('true');
    expect(JSON.parse(seen[0].body)).toEqual(caConfigMap);
  });

  it('deletes with background propagation and the uid precondition, and maps 404 to false', async () => {
    const kc = await startFake([{ status: 200, body: { kind: 'Status', status: 'Success' } }, { status: 404 }]);
    const client = createClusterClient(kc, fast);
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'gone' };
    expect(await client.delete(ref, 'uid-1')).toBe(true);
    expect(await client.delete(ref)).toBe(false);
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'DELETE /api/v1/namespaces/kube-system/configmaps/gone',
      'DELETE /api/v1/namespaces/kube-system/configmaps/gone',
    ]);
    expect(JSON.parse(seen[0].body)).toMatchObject({
      propagationPolicy: 'Background',
      preconditions: { uid: 'uid-1' },
    });
    expect(JSON.parse(seen[1].body).preconditions).toBeUndefined();
  });

  it('lists by label through every page, stamping apiVersion and kind on the items', async () => {
    const item = (name: string) => ({ metadata: { name, namespace: 'ns' } });
    const kc = await startFake([
      { status: 200, body: { items: [item('a'), item('b')], metadata: { continue: 'tok' } } },
      { status: 200, body: { items: [item('c')], metadata: {} } },
    ]);
    const items = await createClusterClient(kc, fast).listByLabel('v1', 'ConfigMap', 'ns', { app: 'x', tier: 'y' });
    expect(items.map((i) => [i.apiVersion, i.kind, i.metadata.name])).toEqual([
      ['v1', 'ConfigMap', 'a'],
      ['v1', 'ConfigMap', 'b'],
      ['v1', 'ConfigMap', 'c'],
    ]);
    const queries = seen.map((r) => new URL(r.url, 'http://x').searchParams);
    expect(queries.map((q) => q.get('labelSelector'))).toEqual(['app=x,tier=y', 'app=x,tier=y']);
    expect(queries.map((q) => q.get('continue'))).toEqual([null, 'tok']);
  });

  it('names the kind the server does not serve, without retrying', async () => {
    const kc = await startFake([]);
    await expect(createClusterClient(kc, fast).get({ apiVersion: 'v1', kind: 'Widget', name: 'w' })).rejects.toThrow(
      /Widget/,
    );
    expect(seen).toHaveLength(0);
  });

  it('treats an Event that already exists as created', async () => {
    const kc = await startFake([{ status: 409 }]);
    await createClusterClient(kc, fast).createEvent({
      involved: { apiVersion: 'poolspirit.io/v1alpha1', kind: 'PoolSpirit', metadata: { name: 'edge-a', uid: 'u1' } },
      type: 'Normal',
      reason: 'Available',
      message: 'ready',
    });
    expect(seen[0].url.startsWith('/api/v1/namespaces/default/events')).toBe(true);
    expect(JSON.parse(seen[0].body)).toMatchObject({
      involvedObject: { kind: 'PoolSpirit', name: 'edge-a', uid: 'u1' },
      reason: 'Available',
    });
  });

  it('classifies errors', () => {
    expect(isTransient({ code: 429 })).toBe(true);
    expect(isTransient({ code: 502 })).toBe(true);
    expect(isTransient({ code: 409 })).toBe(false);
    expect(isTransient({ code: 422 })).toBe(false);
    expect(isTransient(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isTransient(new Error('x'))).toBe(false);
  });
});
