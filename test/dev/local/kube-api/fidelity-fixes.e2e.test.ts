/**
 * The differences the differential check found and that were fixed in dev/local/kube-api: each answer here is
 * what kube-apiserver v1.36.3 gave for the same request (values taken from that measurement).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalCluster, startLocalCluster } from '../../../../dev/local/kube-api/index.ts';

let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await startLocalCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

type Obj = Record<string, any>;
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Obj> {
  const res = await fetch(cluster.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Obj;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

describe('fixed: discovery', () => {
  it("storageVersionHash is kube's (first 8 bytes of sha256, CRDs hashed at their encoded v1beta1)", async () => {
    const core = await call('GET', '/api/v1');
    expect(core.resources.find((r: Obj) => r.name === 'configmaps').storageVersionHash).toBe('qFsyl6wFWjQ=');
    const ext = await call('GET', '/apis/apiextensions.k8s.io/v1');
    expect(ext.resources.find((r: Obj) => r.name === 'customresourcedefinitions').storageVersionHash).toBe(
      'jfWCUB31mvA=',
    );
  });

  it('/api/v1 has no apiVersion; group versions keep it', async () => {
    expect(await call('GET', '/api/v1')).not.toHaveProperty('apiVersion');
    expect((await call('GET', '/apis/apps/v1')).apiVersion).toBe('v1');
  });

  it("lists a custom resource's verbs in apiextensions' order", async () => {
    await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.fix.example.com' },
      spec: {
        group: 'fix.example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    const list = await call('GET', '/apis/fix.example.com/v1');
    expect(list.resources.find((r: Obj) => r.name === 'gadgets').verbs).toEqual([
      'delete',
      'deletecollection',
      'get',
      'list',
      'patch',
      'create',
      'update',
      'watch',
    ]);
  });
});

describe('fixed: objects', () => {
  it('items of a built-in list carry no kind/apiVersion; custom resource items keep them', async () => {
    await call('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'listed' },
    });
    const cms = await call('GET', '/api/v1/namespaces/default/configmaps');
    expect(cms.kind).toBe('ConfigMapList');
    expect(cms.items.find((i: Obj) => i.metadata.name === 'listed')).not.toHaveProperty('kind');
    expect(cms.items.find((i: Obj) => i.metadata.name === 'listed')).not.toHaveProperty('apiVersion');
    await call('POST', '/apis/fix.example.com/v1/namespaces/default/gadgets', {
      apiVersion: 'fix.example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g' },
    });
    const gadgets = await call('GET', '/apis/fix.example.com/v1/namespaces/default/gadgets');
    expect(gadgets.items[0]).toMatchObject({ apiVersion: 'fix.example.com/v1', kind: 'Gadget' });
  });

  it('a pod gets generation 1, enableServiceLinks, probe and fieldRef defaults, and the serviceAccount alias', async () => {
    const pod = await call('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'defaults' },
      spec: {
        serviceAccountName: 'robot',
        containers: [
          {
            name: 'main',
            image: 'registry.k8s.io/pause:3.10',
            env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
            livenessProbe: { httpGet: { port: 8080 } },
          },
        ],
      },
    });
    expect(pod.metadata.generation).toBe(1);
    expect(pod.spec).toMatchObject({ enableServiceLinks: true, serviceAccountName: 'robot', serviceAccount: 'robot' });
    const c = pod.spec.containers[0];
    expect(c.env[0].valueFrom.fieldRef).toEqual({ apiVersion: 'v1', fieldPath: 'status.podIP' });
    expect(c.livenessProbe).toEqual({
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });

  it("the wide pod Table describes Node, Nominated Node and Readiness Gates in kube's words", async () => {
    const table = await call('GET', '/api/v1/namespaces/default/pods', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    const described = Object.fromEntries(table.columnDefinitions.map((c: Obj) => [c.name, c.description]));
    expect(described.Node).toContain(
      'If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName.',
    );
    expect(described['Nominated Node']).toContain(
      'This field does not guarantee that the pod will be scheduled on this node.',
    );
    expect(described['Readiness Gates']).toContain(
      'A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True"',
    );
  });

  it('a new Deployment answers status: {}', async () => {
    const d = await call('POST', '/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    expect(d.status).toEqual({});
    expect(d.spec.template.spec.enableServiceLinks).toBe(true);
  });

  it('a Table watch defines its columns in the first event only', async () => {
    await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tablewatch' } });
    for (const name of ['a', 'b'])
      await call('POST', '/api/v1/namespaces/tablewatch/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
      });
    const res = await fetch(`${cluster.url}/api/v1/namespaces/tablewatch/configmaps?watch=true&timeoutSeconds=1`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    const events = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Obj);
    expect(events).toHaveLength(2);
    expect(events[0]!.object.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(events[0]!.object.columnDefinitions[1]).toMatchObject({
      type: 'string',
      description: expect.stringContaining('Values with non-UTF-8 byte sequences must use the BinaryData field.'),
    });
    expect(events[1]!.object.columnDefinitions).toBeNull();
    expect(events[1]!.object.rows).toHaveLength(1);
  });
});

describe('fixed: paging', () => {
  const pageThrough = async (c: LocalCluster) => {
    const get = async (q: string) =>
      (await fetch(`${c.url}/api/v1/namespaces/default/configmaps?${q}`)).json() as Promise<Obj>;
    for (let i = 0; i < 5; i++) {
      await fetch(`${c.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `page-${i}`, labels: { page: 'yes' } },
        }),
      });
    }
    const first = await get('limit=2');
    const second = await get(`limit=2&continue=${first.metadata.continue}`);
    const last = await get(`limit=2&continue=${second.metadata.continue}`);
    const filtered = await get('limit=2&labelSelector=page%3Dyes');
    return [
      first.metadata.remainingItemCount,
      second.metadata.remainingItemCount,
      last.metadata.remainingItemCount,
      filtered.metadata.remainingItemCount,
      last.metadata.continue,
    ];
  };

  it('a page with more to come says how many remain (unfiltered lists only), on memory storage', async () => {
    const c = await startLocalCluster();
    try {
      expect(await pageThrough(c)).toEqual([3, 1, undefined, undefined, undefined]);
    } finally {
      await c.stop();
    }
  });

  it('the same on etcd storage', async () => {
    const { startEtcd } = await import('../../../../dev/local/etcd/launch.ts');
    const { createEtcdStorage } = await import('../../../../dev/local/kube-api/storage/etcd.ts');
    const etcd = await startEtcd();
    const storage = await createEtcdStorage({ endpoints: [etcd.endpoint] });
    const c = await startLocalCluster({ storage });
    try {
      expect(await pageThrough(c)).toEqual([3, 1, undefined, undefined, undefined]);
    } finally {
      await c.stop();
      await storage.close();
      await etcd.stop();
    }
  });
});
