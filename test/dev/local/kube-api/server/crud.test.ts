import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../support/wait.ts';
import { backends, expectApiError, startTestCluster, type TestCluster, uniqueName } from './harness.ts';

describe.each(backends)('CRUD semantics on $name storage', (backend) => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backend);
    ns = await t.namespace('crud');
  });
  afterAll(() => t?.stop());

  const cm = (name: string, data: Record<string, string> = { a: '1' }): V1ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns },
    data,
  });

  it('fills uid, creationTimestamp and a resourceVersion that moves with every write', async () => {
    const created = await t.objects.create(cm('first'));
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeTruthy();
    const rv1 = Number(created.metadata?.resourceVersion);
    expect(rv1).toBeGreaterThan(0);
    const read = await t.objects.read({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'first', namespace: ns },
    });
    expect(read.metadata?.resourceVersion).toBe(String(rv1));
    const replaced = await t.objects.replace({ ...read, data: { a: '2' } } as any);
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(rv1);
    expect(replaced.metadata?.uid).toBe(created.metadata?.uid);
    expect(replaced.metadata?.creationTimestamp).toEqual(created.metadata?.creationTimestamp);
  });

  it('rejects a duplicate create with 409 AlreadyExists', async () => {
    await t.objects.create(cm('dup'));
    const err = await expectApiError(t.objects.create(cm('dup')));
    expect(err).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'configmaps "dup" already exists',
      details: { name: 'dup', kind: 'configmaps' },
    });
  });

  it('answers 404 NotFound with the qualified resource name', async () => {
    const err = await expectApiError(
      t.objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nope', namespace: ns } }),
    );
    expect(err).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'deployments.apps "nope" not found',
      details: { name: 'nope', group: 'apps', kind: 'deployments' },
    });
  });

  it("rejects an update with a stale resourceVersion with kube's 409 Conflict message", async () => {
    const created = await t.objects.create(cm('stale'));
    await t.objects.replace({ ...created, data: { a: 'fresh' } } as any);
    const err = await expectApiError(t.objects.replace({ ...created, data: { a: 'old' } } as any));
    expect(err.code).toBe(409);
    expect(err.reason).toBe('Conflict');
    expect(err.message).toBe(
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('bumps generation on spec changes only', async () => {
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'gen', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'gen' } },
        template: { metadata: { labels: { app: 'gen' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    };
    const created: any = await t.objects.create(deploy);
    expect(created.metadata.generation).toBe(1);
    const labelled: any = await t.objects.replace({
      ...created,
      metadata: { ...created.metadata, labels: { x: 'y' } },
    });
    expect(labelled.metadata.generation).toBe(1);
    const scaled: any = await t.objects.replace({ ...labelled, spec: { ...labelled.spec, replicas: 3 } });
    expect(scaled.metadata.generation).toBe(2);
  });

  it('does not write when an update changes nothing', async () => {
    const created = await t.objects.create(cm('noop'));
    const again = await t.objects.replace(created);
    expect(again.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });

  it('requires the namespace to exist', async () => {
    const err = await expectApiError(
      t.objects.create({ ...cm('x'), metadata: { name: 'x', namespace: 'no-such-ns' } }),
    );
    expect(err).toMatchObject({ code: 404, reason: 'NotFound', message: 'namespaces "no-such-ns" not found' });
  });

  it('generates names from generateName', async () => {
    const res = await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { generateName: 'gen-' } });
    expect(res.status).toBe(201);
    expect(res.json.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('rejects invalid names with 422 Invalid and a cause on metadata.name', async () => {
    const res = await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, cm('Bad_Name'));
    expect(res.status).toBe(422);
    expect(res.json.reason).toBe('Invalid');
    expect(res.json.message).toMatch(/^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": /);
    expect(res.json.details).toMatchObject({ name: 'Bad_Name', kind: 'ConfigMap' });
    expect(res.json.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });
  });

  it('does not store anything on dryRun=All', async () => {
    const before = t.cluster.requestLog.mark();
    const res = await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, cm('dry'));
    expect(res.status).toBe(201);
    expect(res.json.metadata.uid).toBeTruthy();
    const get = await t.raw('GET', `/api/v1/namespaces/${ns}/configmaps/dry`);
    expect(get.status).toBe(404);
    expect(t.cluster.requestLog.countWritesSince(before)).toBe(0);
  });

  it('records writes in the request log with their field manager', async () => {
    const mark = t.cluster.requestLog.mark();
    await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps?fieldManager=tester`, cm('logged'));
    await t.raw('GET', `/api/v1/namespaces/${ns}/configmaps/logged`);
    const writes = t.cluster.requestLog.writesSince(mark);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatchObject({
      verb: 'create',
      resource: 'configmaps',
      namespace: ns,
      status: 201,
      fieldManager: 'tester',
    });
    expect(t.cluster.requestLog.since(mark).map((r) => r.verb)).toEqual(['create', 'get']);
  });

  it('tells the writes that were made from the ones refused (successfulOnly)', async () => {
    const mark = t.cluster.requestLog.mark();
    await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, cm('once'));
    expect((await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, cm('once'))).status).toBe(409);
    expect((await t.raw('PUT', `/api/v1/namespaces/${ns}/configmaps/absent`, cm('absent'))).status).toBe(404);
    expect(t.cluster.requestLog.countWritesSince(mark)).toBe(3);
    expect(t.cluster.requestLog.writesSince(mark, { successfulOnly: true }).map((w) => w.status)).toEqual([201]);
  });

  it('deletes with preconditions and returns a Success Status', async () => {
    const created = await t.objects.create(cm('del'));
    const bad = await t.raw('DELETE', `/api/v1/namespaces/${ns}/configmaps/del`, { preconditions: { uid: 'other' } });
    expect(bad.status).toBe(409);
    expect(bad.json.message).toContain('Precondition failed: UID in precondition: other');
    const ok = await t.raw('DELETE', `/api/v1/namespaces/${ns}/configmaps/del`, {
      preconditions: { uid: created.metadata?.uid },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'del', kind: 'configmaps', uid: created.metadata?.uid },
    });
  });

  it('serves cluster-scoped resources without a namespace', async () => {
    const name = uniqueName('role');
    const created: any = await t.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    } as any);
    expect(created.metadata.namespace).toBeUndefined();
    const list = await t.raw('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles');
    expect(list.json.items.map((i: any) => i.metadata.name)).toContain(name);
  });
});

describe('defaults for built-in kinds', () => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster(backends[0]);
  });
  afterAll(() => t?.stop());

  it('fills pod, deployment and service defaults like kube-apiserver', async () => {
    const pod = await t.raw('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    expect(pod.json.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(pod.json.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
    });
    expect(pod.json.spec.containers[0]).toMatchObject({
      imagePullPolicy: 'Always',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });

    const deploy = await t.raw('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
      },
    });
    expect(deploy.json.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    });
    expect(deploy.json.spec.template.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');

    const svc = await t.raw('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(svc.json.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    });
    expect(svc.json.spec.clusterIP).toBe('10.96.0.11');
    // An update that leaves the allocated cluster IP out keeps it.
    const { clusterIP, clusterIPs, ...rest } = svc.json.spec;
    const updated = await t.raw('PUT', '/api/v1/namespaces/default/services/s', { ...svc.json, spec: rest });
    expect(updated.json.spec.clusterIP).toBe(clusterIP);
    expect(updated.json.metadata.resourceVersion).toBe(svc.json.metadata.resourceVersion);
    expect(clusterIPs).toEqual([clusterIP]);
  });
});

describe.each(backends)('namespaces on $name storage', (backend) => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster(backend);
  });
  afterAll(() => t?.stop());

  it('deleting a namespace deletes its contents, refuses new content meanwhile, then goes', async () => {
    const ns = await t.namespace('doomed');
    await t.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'keep', namespace: ns, finalizers: ['example.com/hold'] },
    });
    await t.objects.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns } });
    const del = await t.raw('DELETE', `/api/v1/namespaces/${ns}`);
    expect(del.status).toBe(200);
    expect(del.json.status.phase).toBe('Terminating');
    expect(del.json.metadata.deletionTimestamp).toBeTruthy();

    const refused = await t.raw('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'late' } });
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe(
      `configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
    );

    // The secret goes; the held configmap waits for its finalizer, and so does the namespace.
    await waitFor(
      async () => (await t.raw('GET', `/api/v1/namespaces/${ns}/secrets/s`)).status === 404,
      10_000,
      'the secret in the deleted namespace to be gone',
    );
    await waitFor(
      async () =>
        Boolean((await t.raw('GET', `/api/v1/namespaces/${ns}/configmaps/keep`)).json.metadata.deletionTimestamp),
      10_000,
      'the finalized configmap to be marked for deletion',
    );
    expect((await t.raw('GET', `/api/v1/namespaces/${ns}`)).status).toBe(200);

    await t.raw(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/keep`,
      { metadata: { finalizers: null } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    await waitFor(
      async () => (await t.raw('GET', `/api/v1/namespaces/${ns}`)).status === 404,
      10_000,
      'the namespace to be gone',
    );
  });
});
