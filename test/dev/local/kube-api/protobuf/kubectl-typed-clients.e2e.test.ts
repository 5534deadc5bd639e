/**
 * kubectl's imperative commands use client-go's typed clients, which send protobuf request bodies and
 * ask for `application/vnd.kubernetes.protobuf, application/json`. Each command must succeed against the
 * local API, and what it stored (read back as JSON) must be the object kubectl meant to create.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl-harness.ts';

type Obj = Record<string, any>;

describe('kubectl typed clients (protobuf request bodies)', () => {
  let env: KubectlEnv;
  const NS = 'demo';
  const getJson = async (...args: string[]): Promise<Obj> => JSON.parse(await env.ok(['get', ...args, '-o', 'json']));
  /** Runs a create command, checks kubectl's "created" line, returns the stored object. */
  const created = async (args: string[], ref: string[], expectedLine: string): Promise<Obj> => {
    expect(await env.ok(args)).toContain(expectedLine);
    return getJson(...ref);
  };

  beforeAll(async () => {
    env = await startKubectlEnv('memory');
    await env.ok(['create', 'namespace', NS]);
  });
  afterAll(() => env?.stop());

  it('create namespace', async () => {
    const ns = await created(['create', 'namespace', 'pb-ns'], ['namespace', 'pb-ns'], 'namespace/pb-ns created');
    expect(ns).toMatchObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pb-ns' } });
  });

  it('create configmap --from-literal keeps empty values', async () => {
    const cm = await created(
      [
        '-n',
        NS,
        'create',
        'configmap',
        'cfg',
        '--from-literal=a=b',
        '--from-literal=empty=',
        '--from-literal=multi=x=y',
      ],
      ['-n', NS, 'configmap', 'cfg'],
      'configmap/cfg created',
    );
    expect(cm.data).toEqual({ a: 'b', empty: '', multi: 'x=y' });
    expect(cm.binaryData).toBeUndefined();
  });

  it('create secret generic round-trips data through base64', async () => {
    const secret = await created(
      ['-n', NS, 'create', 'secret', 'generic', 'creds', '--from-literal=password=p@ss:wörd', '--from-literal=blank='],
      ['-n', NS, 'secret', 'creds'],
      'secret/creds created',
    );
    expect(Object.keys(secret.data).sort()).toEqual(['blank', 'password']);
    expect(Buffer.from(secret.data.password, 'base64').toString('utf8')).toBe('p@ss:wörd');
    expect(secret.data.blank).toBe('');
    const value = await env.ok(['-n', NS, 'get', 'secret', 'creds', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(value, 'base64').toString('utf8')).toBe('p@ss:wörd');
  });

  it('create serviceaccount', async () => {
    const sa = await created(
      ['-n', NS, 'create', 'serviceaccount', 'robot'],
      ['-n', NS, 'serviceaccount', 'robot'],
      'serviceaccount/robot created',
    );
    expect(sa).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'robot', namespace: NS } });
  });

  it('create deployment --image keeps an explicit zero replica count', async () => {
    const d = await created(
      ['-n', NS, 'create', 'deployment', 'web', '--image=nginx:1.27', '--port=8080', '--replicas=0'],
      ['-n', NS, 'deployment', 'web'],
      'deployment.apps/web created',
    );
    expect(d.apiVersion).toBe('apps/v1');
    expect(d.metadata.labels).toEqual({ app: 'web' });
    expect(d.spec.replicas).toBe(0);
    expect(d.spec.selector).toEqual({ matchLabels: { app: 'web' } });
    expect(d.spec.template.metadata.labels).toEqual({ app: 'web' });
    const [container] = d.spec.template.spec.containers;
    expect(container).toMatchObject({ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] });
    // Zero-valued non-pointer fields gogo-protobuf writes (stdin, tty, workingDir ...) are not in kube's JSON.
    expect(container).not.toHaveProperty('stdin');
    expect(container).not.toHaveProperty('workingDir');
  });

  it('create role / rolebinding', async () => {
    const role = await created(
      ['-n', NS, 'create', 'role', 'pod-reader', '--verb=get', '--verb=list', '--resource=pods', '--resource-name=one'],
      ['-n', NS, 'role', 'pod-reader'],
      'role.rbac.authorization.k8s.io/pod-reader created',
    );
    // The core group is the empty string: it must survive as a list element.
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['pods'], resourceNames: ['one'], verbs: ['get', 'list'] },
    ]);

    const rb = await created(
      [
        '-n',
        NS,
        'create',
        'rolebinding',
        'read-pods',
        '--role=pod-reader',
        '--user=alice',
        `--serviceaccount=${NS}:robot`,
      ],
      ['-n', NS, 'rolebinding', 'read-pods'],
      'rolebinding.rbac.authorization.k8s.io/read-pods created',
    );
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' });
    expect(rb.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
      { kind: 'ServiceAccount', name: 'robot', namespace: NS },
    ]);
  });

  it('create clusterrole / clusterrolebinding', async () => {
    const cr = await created(
      [
        'create',
        'clusterrole',
        'node-viewer',
        '--verb=get',
        '--verb=watch',
        '--resource=nodes',
        '--resource=deployments.apps',
      ],
      ['clusterrole', 'node-viewer'],
      'clusterrole.rbac.authorization.k8s.io/node-viewer created',
    );
    expect(cr.rules).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'watch'] },
    ]);
    const crb = await created(
      ['create', 'clusterrolebinding', 'view-nodes', '--clusterrole=node-viewer', '--group=ops'],
      ['clusterrolebinding', 'view-nodes'],
      'clusterrolebinding.rbac.authorization.k8s.io/view-nodes created',
    );
    expect(crb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-viewer' });
    expect(crb.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'ops' }]);
  });

  it('create service clusterip: int target ports, and a headless service', async () => {
    const svc = await created(
      ['-n', NS, 'create', 'service', 'clusterip', 'api', '--tcp=80:8080', '--tcp=443:8443'],
      ['-n', NS, 'service', 'api'],
      'service/api created',
    );
    expect(svc.spec.type).toBe('ClusterIP');
    expect(svc.spec.selector).toEqual({ app: 'api' });
    expect(svc.spec.ports).toEqual([
      { name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 },
      { name: '443-8443', port: 443, protocol: 'TCP', targetPort: 8443 },
    ]);
    const headless = await created(
      ['-n', NS, 'create', 'service', 'clusterip', 'hl', '--clusterip=None'],
      ['-n', NS, 'service', 'hl'],
      'service/hl created',
    );
    expect(headless.spec.clusterIP).toBe('None');
  });

  it('debug --copy-to: a copied pod keeps Go-inlined structs flat and pointer zeros', async () => {
    // `kubectl run` sends JSON; `kubectl debug --copy-to` creates the copy with the typed client (protobuf).
    await env.ok(['apply', '-f', '-'], {
      stdin: `apiVersion: v1
kind: Pod
metadata: {name: source, namespace: ${NS}}
spec:
  securityContext: {runAsUser: 0, runAsNonRoot: false}
  volumes:
  - {name: cfg, configMap: {name: cfg, defaultMode: 420, items: [{key: a, path: a.txt, mode: 0}]}}
  containers:
  - name: app
    image: busybox
    env: [{name: PW, valueFrom: {secretKeyRef: {name: creds, key: password, optional: false}}}]
    envFrom: [{configMapRef: {name: cfg}}]
    readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 3}
    ports: [{name: http, containerPort: 8080}]
`,
    });
    await env.ok([
      '-n',
      NS,
      'debug',
      'source',
      '--copy-to=copied',
      '--image=busybox',
      '--container=dbg',
      '--profile=general',
      '--keep-readiness=true',
    ]);
    const { spec } = await getJson('-n', NS, 'pod', 'copied');
    // Volume.volumeSource, ConfigMapVolumeSource.localObjectReference, Probe.handler and
    // SecretKeySelector.localObjectReference are nested in protobuf and inline in JSON.
    expect(spec.volumes).toHaveLength(1);
    expect(spec.volumes[0]).toMatchObject({
      name: 'cfg',
      configMap: { name: 'cfg', defaultMode: 420, items: [{ key: 'a', path: 'a.txt', mode: 0 }] },
    });
    expect(spec.volumes[0]).not.toHaveProperty('volumeSource');
    const app = spec.containers.find((c: Obj) => c.name === 'app');
    expect(app.env).toEqual([
      { name: 'PW', valueFrom: { secretKeyRef: { name: 'creds', key: 'password', optional: false } } },
    ]);
    expect(app.envFrom).toEqual([{ configMapRef: { name: 'cfg' } }]);
    expect(app.readinessProbe).toMatchObject({ httpGet: { path: '/ready', port: 'http' }, periodSeconds: 3 });
    expect(app.readinessProbe).not.toHaveProperty('handler');
    // Go pointers set to zero are kept; they mean something (run as root, not "unset").
    expect(spec.securityContext).toMatchObject({ runAsUser: 0, runAsNonRoot: false });
    expect(spec.containers.map((c: Obj) => c.name)).toEqual(['app', 'dbg']);
  });

  it('debug node/: the node debugger pod gets its hostPath volume', async () => {
    await env.ok(['apply', '-f', '-'], { stdin: 'apiVersion: v1\nkind: Node\nmetadata: {name: debug-me}\n' });
    const out = await env.ok(['-n', NS, 'debug', 'node/debug-me', '--image=busybox', '--profile=general']);
    const name = /Creating debugging pod (\S+)/.exec(out)?.[1];
    expect(name).toMatch(/^node-debugger-debug-me-/);
    const { spec } = await getJson('-n', NS, 'pod', name!);
    expect(spec.nodeName).toBe('debug-me');
    expect(spec.hostPID).toBe(true);
    expect(spec.volumes).toMatchObject([{ name: 'host-root', hostPath: { path: '/' } }]);
    expect(spec.containers[0].volumeMounts).toMatchObject([{ name: 'host-root', mountPath: '/host' }]);
  });

  it('server-side dry run of a typed create stores nothing', async () => {
    expect(
      await env.ok(['-n', NS, 'create', 'configmap', 'ghost', '--from-literal=a=b', '--dry-run=server', '-o', 'name']),
    ).toBe('configmap/ghost\n');
    const r = await env.kubectl(['-n', NS, 'get', 'configmap', 'ghost']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('NotFound');
  });

  it('answers protobuf-with-JSON-fallback clients in JSON and protobuf-only clients with 406', async () => {
    const get = (accept: string) =>
      fetch(`${env.cluster.url}/api/v1/namespaces/${NS}/configmaps/cfg`, { headers: { Accept: accept } });
    const fallback = await get('application/vnd.kubernetes.protobuf, application/json');
    expect(fallback.status).toBe(200);
    expect(fallback.headers.get('content-type')).toBe('application/json');
    expect(((await fallback.json()) as Obj).data.a).toBe('b');
    const only = await get('application/vnd.kubernetes.protobuf');
    expect(only.status).toBe(406);
    expect(((await only.json()) as Obj).reason).toBe('NotAcceptable');
  });

  it('rejects a garbled protobuf DeleteOptions body with 400 and deletes nothing', async () => {
    const res = await fetch(`${env.cluster.url}/api/v1/namespaces/${NS}/configmaps/cfg`, {
      method: 'DELETE',
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
      body: Buffer.from('6b3873000a130a027631120d44656c657465', 'hex'),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Obj).reason).toBe('BadRequest');
    expect((await getJson('-n', NS, 'configmap', 'cfg')).data.a).toBe('b');
  });

  it('cordon and drain: drain deletes pods with protobuf DeleteOptions bodies', async () => {
    await env.ok(['apply', '-f', '-'], {
      stdin: `apiVersion: v1
kind: Node
metadata: {name: worker-1}
---
apiVersion: v1
kind: Pod
metadata: {name: on-worker, namespace: ${NS}}
spec:
  nodeName: worker-1
  containers: [{name: c, image: busybox}]
`,
    });
    expect(await env.ok(['cordon', 'worker-1'])).toContain('node/worker-1 cordoned');
    expect((await getJson('node', 'worker-1')).spec.unschedulable).toBe(true);

    // A dry-run DeleteOptions body (what `drain --dry-run=server` sends, captured from kubectl) deletes nothing.
    const dryRunDelete = Buffer.from('6b3873000a130a027631120d44656c6574654f7074696f6e7312052a03416c6c1a002200', 'hex');
    const res = await fetch(`${env.cluster.url}/api/v1/namespaces/${NS}/pods/on-worker`, {
      method: 'DELETE',
      headers: {
        'Content-Type': 'application/vnd.kubernetes.protobuf',
        Accept: 'application/vnd.kubernetes.protobuf, application/json',
      },
      body: dryRunDelete,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect((await getJson('-n', NS, 'pod', 'on-worker')).metadata.name).toBe('on-worker');

    // --grace-period=0 sends gracePeriodSeconds: 0, a zero that must not be mistaken for "unset".
    const out = await env.ok(['drain', 'worker-1', '--force', '--grace-period=0', '--timeout=20s']);
    expect(out).toContain('node/worker-1 drained');
    const gone = await env.kubectl(['-n', NS, 'get', 'pod', 'on-worker']);
    expect(gone.stderr).toContain('NotFound');
  });
});
