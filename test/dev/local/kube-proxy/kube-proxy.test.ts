import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalCluster, startLocalCluster } from '../../../../dev/local/kube-api/index.ts';
import {
  FaultRuleError,
  type KubeProxy,
  kubeRequestInfo,
  REDACTED_B64,
  startKubeProxy,
} from '../../../../dev/local/kube-proxy/index.ts';
import { waitFor } from '../../../support/wait.ts';

let cluster: LocalCluster;
let proxy: KubeProxy;

beforeAll(async () => {
  cluster = await startLocalCluster();
  proxy = await startKubeProxy({ target: cluster.url, captureBodies: true });
});
afterAll(async () => {
  await proxy?.stop();
  await cluster?.stop();
});

const send = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
  fetch(proxy.url + path, {
    method,
    headers: { 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('kube-proxy records', () => {
  it('method, path, query, content type, field manager, status and duration of each request', async () => {
    const mark = proxy.mark();
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rec', namespace: 'default' },
      data: { a: '1' },
    };
    const applied = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/rec?fieldManager=alice&force=true',
      cm,
      'application/apply-patch+yaml',
    );
    expect(applied.status).toBe(201);
    expect((await send('GET', '/api/v1/namespaces/default/configmaps/missing')).status).toBe(404);
    const recs = proxy.records(mark);
    expect(recs.map((r) => [r.verb, r.resource, r.name, r.status, r.fieldManager])).toEqual([
      ['patch', 'configmaps', 'rec', 201, 'alice'],
      ['get', 'configmaps', 'missing', 404, undefined],
    ]);
    expect(recs[0]).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/rec',
      query: 'fieldManager=alice&force=true',
      contentType: 'application/apply-patch+yaml',
      namespace: 'default',
    });
    expect(recs[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.parse(recs[0]!.requestBody!.toString()).data).toEqual({ a: '1' });
    // The backend itself saw exactly these requests: the proxy adds none.
    expect(
      cluster.requestLog
        .since()
        .filter((r) => r.path.includes('/configmaps/rec') || r.path.includes('/configmaps/missing')),
    ).toHaveLength(2);
  });

  it('never keeps a Secret value, in either direction, while keeping the body structure', async () => {
    const mark = proxy.mark();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sec', namespace: 'default' },
      data: { key: Buffer.from('PRIVATE KEY').toString('base64') },
      stringData: { other: 'hunter2' },
    };
    expect((await send('POST', '/api/v1/namespaces/default/secrets', secret)).status).toBe(201);
    const listed = await (await send('GET', '/api/v1/namespaces/default/secrets')).text();
    expect(listed).toContain(Buffer.from('PRIVATE KEY').toString('base64'));
    const tableRes = await fetch(`${proxy.url}/api/v1/namespaces/default/secrets?includeObject=Object`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(await tableRes.text()).toContain(Buffer.from('PRIVATE KEY').toString('base64'));
    const [create, list, table] = proxy.records(mark);
    for (const body of [create!.requestBody!, create!.responseBody!, list!.responseBody!, table!.responseBody!]) {
      const text = body.toString();
      expect(text).not.toContain(Buffer.from('PRIVATE KEY').toString('base64'));
      expect(text).not.toContain('hunter2');
      expect(text).toContain(REDACTED_B64);
    }
    expect(JSON.parse(list!.responseBody!.toString()).items[0].metadata.name).toBe('sec');
  });

  it('forwards a DELETE with a body (DeleteOptions) intact', async () => {
    await send('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'doomed' },
    });
    const res = await fetch(`${proxy.url}/api/v1/namespaces/default/configmaps/doomed`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ propagationPolicy: 'Background', preconditions: { uid: 'not-its-uid' } }),
    });
    // The precondition reached the backend: it refuses.
    expect(res.status).toBe(409);
    expect(((await res.json()) as { message: string }).message).toContain(
      'Precondition failed: UID in precondition: not-its-uid',
    );
  });

  it('keeps no body at all without captureBodies', async () => {
    const bare = await startKubeProxy({ target: cluster.url });
    try {
      expect((await fetch(`${bare.url}/api/v1/namespaces/default/configmaps`)).status).toBe(200);
      expect(bare.records()).toHaveLength(1);
      expect(bare.records()[0]!.responseBody).toBeUndefined();
    } finally {
      await bare.stop();
    }
  });
});

describe('kube-proxy injects faults by rule', () => {
  it('answers 409, 429 and 500 with kube Status bodies, only as often as the rule says', async () => {
    proxy.setRules([
      { match: { verbs: ['patch'], resources: ['configmaps'] }, action: { status: 409 }, times: 1 },
      { match: { verbs: ['list'], namespace: 'kube-system' }, action: { status: 429, retryAfterSeconds: 3 } },
      { match: { path: /\/configmaps\/boom$/ }, action: { status: 500, message: 'disk on fire' } },
    ]);
    try {
      const mark = proxy.mark();
      const merge = (name: string) =>
        send(
          'PATCH',
          `/api/v1/namespaces/default/configmaps/${name}`,
          { data: { b: '2' } },
          'application/merge-patch+json',
        );
      const first = await merge('rec');
      expect(first.status).toBe(409);
      expect(await first.json()).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        reason: 'Conflict',
        code: 409,
        message:
          'Operation cannot be fulfilled on configmaps "rec": the object has been modified; please apply your changes to the latest version and try again',
        details: { name: 'rec', kind: 'configmaps' },
      });
      expect((await merge('rec')).status).toBe(200); // times: 1
      const busy = await send('GET', '/api/v1/namespaces/kube-system/configmaps');
      expect(busy.status).toBe(429);
      expect(busy.headers.get('retry-after')).toBe('3');
      expect(await busy.json()).toMatchObject({
        reason: 'TooManyRequests',
        code: 429,
        details: { retryAfterSeconds: 3 },
      });
      const boom = await send('GET', '/api/v1/namespaces/default/configmaps/boom');
      expect(boom.status).toBe(500);
      expect(await boom.json()).toMatchObject({
        reason: 'InternalError',
        message: 'Internal error occurred: disk on fire',
      });
      expect(proxy.records(mark).map((r) => r.fault)).toEqual(['status 409', undefined, 'status 429', 'status 500']);
      // Injected answers never reach the backend.
      expect(cluster.requestLog.since().filter((r) => r.path.endsWith('/configmaps/boom'))).toHaveLength(0);
    } finally {
      proxy.setRules([]);
    }
  });

  it('delays a request, or hangs it until the client times out', async () => {
    proxy.setRules([
      { match: { name: 'slow' }, action: { delayMs: 300 } },
      { match: { name: 'hung' }, action: { hangMs: 60_000 } },
    ]);
    try {
      const mark = proxy.mark();
      expect((await send('GET', '/api/v1/namespaces/default/configmaps/slow')).status).toBe(404);
      await expect(
        fetch(`${proxy.url}/api/v1/namespaces/default/configmaps/hung`, { signal: AbortSignal.timeout(200) }),
      ).rejects.toThrow();
      const [slow] = proxy.records(mark);
      expect(slow!.durationMs).toBeGreaterThanOrEqual(290);
      const hung = await waitFor(() => proxy.records(mark)[1], 5_000, 'the hung request to be recorded');
      expect(hung.fault).toBe('hang 60000ms');
      expect(hung.status).toBe(0);
    } finally {
      proxy.setRules([]);
    }
  });

  it('drops a watch connection after a number of events', async () => {
    proxy.setRules([{ match: { verbs: ['watch'] }, action: { dropWatch: { afterEvents: 2 } } }]);
    try {
      for (const name of ['w1', 'w2', 'w3']) {
        await send('POST', '/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name },
        });
      }
      const res = await fetch(`${proxy.url}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=30`);
      let text = '';
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      // The stream ends (with an error: the connection is cut) long before the 30 s watch timeout.
      const started = Date.now();
      await (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += decoder.decode(value);
        }
      })().catch(() => undefined);
      expect(Date.now() - started).toBeLessThan(10_000);
      const events = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string });
      expect(events).toHaveLength(2);
      expect(events.every((e) => e.type === 'ADDED')).toBe(true);
    } finally {
      proxy.setRules([]);
    }
  });

  it('refuses a rule it cannot carry out, naming the field', () => {
    expect(() => proxy.setRules([{ action: { status: 404 as 409 } }])).toThrow(
      new FaultRuleError('fault rule 1: action.status must be 409, 429 or 500, got 404'),
    );
    expect(() => proxy.setRules([{ action: { dropWatch: {} } }])).toThrow(
      /action.dropWatch needs afterMs or afterEvents/,
    );
    expect(() => proxy.setRules([{ action: { delayMs: -1 } }])).toThrow(/action.delayMs must be a non-negative number/);
  });
});

describe('kubeRequestInfo', () => {
  const q = (s = '') => new URLSearchParams(s);
  it('reads verb, group, resource, subresource, namespace and name from the URL', () => {
    expect(kubeRequestInfo('GET', '/api/v1/namespaces', q())).toEqual({
      verb: 'list',
      group: '',
      version: 'v1',
      resource: 'namespaces',
    });
    expect(kubeRequestInfo('GET', '/api/v1/namespaces/kube-system', q())).toMatchObject({
      verb: 'get',
      resource: 'namespaces',
      name: 'kube-system',
    });
    expect(kubeRequestInfo('PUT', '/api/v1/namespaces/x/finalize', q())).toMatchObject({
      verb: 'update',
      resource: 'namespaces',
      name: 'x',
      subresource: 'finalize',
    });
    expect(kubeRequestInfo('PATCH', '/apis/apps/v1/namespaces/ns/deployments/d/status', q())).toEqual({
      verb: 'patch',
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      namespace: 'ns',
      name: 'd',
      subresource: 'status',
    });
    expect(kubeRequestInfo('GET', '/api/v1/namespaces/ns/pods', q('watch=1'))).toMatchObject({
      verb: 'watch',
      namespace: 'ns',
      resource: 'pods',
    });
    expect(kubeRequestInfo('DELETE', '/api/v1/namespaces/ns/pods', q())).toMatchObject({ verb: 'deletecollection' });
    expect(kubeRequestInfo('GET', '/apis/apps/v1', q())).toEqual({ verb: 'get', group: 'apps', version: 'v1' });
    expect(kubeRequestInfo('GET', '/openapi/v3', q())).toEqual({ verb: 'get' });
  });
});
