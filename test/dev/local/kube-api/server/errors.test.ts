import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startTestCluster, type TestCluster } from './harness.ts';

describe("bad input gets kube-apiserver's status codes and Status bodies", () => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backends[0]);
    ns = await t.namespace('errors');
  });
  afterAll(() => t?.stop());
  const cms = () => `/api/v1/namespaces/${ns}/configmaps`;

  it('malformed JSON → 400 BadRequest naming the expected kind', async () => {
    const res = await t.raw('POST', cms(), '{"apiVersion":"v1","kind":"ConfigMap",');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
    });
    expect(res.json.message).toMatch(
      /^the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version\/kind; json parse error: .* \(\{"apiVersion":"v1","kind":"Con \.\.\.\)$/,
    );
  });

  it('malformed YAML → 400 BadRequest', async () => {
    const res = await t.raw('POST', cms(), 'metadata:\n  name: x\n bad: [', { 'Content-Type': 'application/yaml' });
    expect(res.status).toBe(400);
    expect(res.json.reason).toBe('BadRequest');
    expect(res.json.message).toContain('error converting YAML to JSON');
  });

  it('accepts a YAML body', async () => {
    const res = await t.raw(
      'POST',
      cms(),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: "1"\n',
      { 'Content-Type': 'application/yaml' },
    );
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({ a: '1' });
  });

  it('a body whose kind does not match the URL → 400', async () => {
    const res = await t.raw('POST', cms(), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } });
    expect(res.status).toBe(400);
    expect(res.json.reason).toBe('BadRequest');
    expect(res.json.message).toMatch(/^Secret in version "v1" cannot be handled as a ConfigMap: /);
  });

  it('a body whose apiVersion does not match the URL → 400', async () => {
    const res = await t.raw('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1beta1',
      kind: 'Deployment',
      metadata: { name: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.json.reason).toBe('BadRequest');
  });

  it('a name in the body that differs from the URL → 400', async () => {
    await t.raw('POST', cms(), { metadata: { name: 'named' } });
    const res = await t.raw('PUT', `${cms()}/named`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'other' },
    });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('the name of the object (other) does not match the name on the URL (named)');
  });

  it('a namespace in the body that differs from the URL → 400', async () => {
    const res = await t.raw('POST', cms(), { metadata: { name: 'y', namespace: 'elsewhere' } });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });

  it('unknown fields: 400 under Strict, a Warning header under the default Warn, silence under Ignore', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict' }, data: {}, bogus: 1 };
    const strict = await t.raw('POST', `${cms()}?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"',
    );
    const warn = await t.raw('POST', cms(), body);
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toBe('299 - "unknown field \\"bogus\\""');
    expect(warn.json.bogus).toBeUndefined();
    const ignore = await t.raw('POST', `${cms()}?fieldValidation=Ignore`, { ...body, metadata: { name: 'ignored' } });
    expect(ignore.status).toBe(201);
    expect(ignore.headers.get('warning')).toBeNull();
  });

  it('an invalid fieldValidation value → 400', async () => {
    const res = await t.raw('POST', `${cms()}?fieldValidation=Loud`, { metadata: { name: 'z' } });
    expect(res.status).toBe(400);
  });

  it('setting resourceVersion on create → 400', async () => {
    const res = await t.raw('POST', cms(), { metadata: { name: 'rv', resourceVersion: '5' } });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('resourceVersion should not be set on objects to be created');
  });

  it('an unknown resource → 404 with a Status', async () => {
    const res = await t.raw('GET', '/apis/nope.example.com/v1/things');
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('a protobuf-only Accept → 406; protobuf-then-JSON (what kubectl sends) → JSON', async () => {
    const only = await t.raw('GET', cms(), undefined, { Accept: 'application/vnd.kubernetes.protobuf' });
    expect(only.status).toBe(406);
    expect(only.json.reason).toBe('NotAcceptable');
    const both = await t.raw('GET', cms(), undefined, {
      Accept: 'application/vnd.kubernetes.protobuf, application/json',
    });
    expect(both.status).toBe(200);
    expect(both.headers.get('content-type')).toBe('application/json');
    expect(both.json.kind).toBe('ConfigMapList');
  });

  it('an unsupported patch content type → 415', async () => {
    const res = await t.raw('PATCH', `${cms()}/named`, { data: { a: 'b' } }, { 'Content-Type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.json.reason).toBe('UnsupportedMediaType');
  });

  it('apply without fieldManager → 422 on PatchOptions', async () => {
    const res = await t.raw(
      'PATCH',
      `${cms()}/named`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'named' } },
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
  });

  it('injects faults at request entry: 429 with Retry-After, and 500', async () => {
    t.cluster.setFaults({ rules: [{ verbs: ['get'], resources: ['secrets'], errorRate: 1, errorStatus: 429 }] });
    try {
      const busy = await t.raw('GET', `/api/v1/namespaces/${ns}/secrets/any`);
      expect(busy.status).toBe(429);
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(busy.json).toMatchObject({
        kind: 'Status',
        reason: 'TooManyRequests',
        code: 429,
        details: { retryAfterSeconds: 1 },
      });
      expect((await t.raw('GET', cms())).status).toBe(200);
      t.cluster.setFaults({ rules: [{ verbs: ['create'], errorRate: 1, errorStatus: 500 }] });
      const failed = await t.raw('POST', cms(), { metadata: { name: 'fault' } });
      expect(failed.status).toBe(500);
      expect(failed.json.reason).toBe('InternalError');
    } finally {
      t.cluster.setFaults({ rules: [] });
    }
    expect((await t.raw('POST', cms(), { metadata: { name: 'fault' } })).status).toBe(201);
  });

  it('injects 409 Conflict on writes, naming the object, and leaves it unchanged', async () => {
    expect((await t.raw('POST', cms(), { metadata: { name: 'contended' }, data: { v: '1' } })).status).toBe(201);
    t.cluster.setFaults({ rules: [{ verbs: ['patch'], resources: ['configmaps'], errorRate: 1, errorStatus: 409 }] });
    try {
      const lost = await t.raw(
        'PATCH',
        `${cms()}/contended`,
        { data: { v: '2' } },
        { 'Content-Type': 'application/merge-patch+json' },
      );
      expect(lost.status).toBe(409);
      expect(lost.json).toMatchObject({
        kind: 'Status',
        reason: 'Conflict',
        code: 409,
        details: { name: 'contended', kind: 'configmaps' },
      });
    } finally {
      t.cluster.setFaults({ rules: [] });
    }
    expect((await t.raw('GET', `${cms()}/contended`)).json.data).toEqual({ v: '1' });
  });

  it('serves Table responses when asked', async () => {
    const res = await t.raw('GET', cms(), undefined, {
      Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    expect(res.json.kind).toBe('Table');
    expect(res.json.apiVersion).toBe('meta.k8s.io/v1');
    expect(res.json.columnDefinitions.map((c: any) => c.name)).toContain('Name');
  });
});

describe('discovery and health', () => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster(backends[0]);
  });
  afterAll(() => t?.stop());

  it('serves /api, /apis, group and resource lists, /version and health checks', async () => {
    const api = await t.raw('GET', '/api');
    expect(api.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apis = await t.raw('GET', '/apis');
    const groups = Object.fromEntries(apis.json.groups.map((g: any) => [g.name, g.preferredVersion.groupVersion]));
    expect(groups).toMatchObject({
      apps: 'apps/v1',
      'rbac.authorization.k8s.io': 'rbac.authorization.k8s.io/v1',
      'coordination.k8s.io': 'coordination.k8s.io/v1',
      'apiextensions.k8s.io': 'apiextensions.k8s.io/v1',
    });
    const core = await t.raw('GET', '/api/v1');
    const pods = core.json.resources.find((r: any) => r.name === 'pods');
    expect(pods).toMatchObject({ kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'] });
    expect(core.json.resources.find((r: any) => r.name === 'nodes')).toMatchObject({ namespaced: false });
    const apps = await t.raw('GET', '/apis/apps');
    expect(apps.json).toMatchObject({ kind: 'APIGroup', name: 'apps' });
    const version = await t.raw('GET', '/version');
    expect(version.json).toMatchObject({ major: '1', minor: '36', gitVersion: 'v1.36.3-local', emulationMinor: '36' });
    for (const p of ['/healthz', '/readyz', '/livez']) expect((await t.raw('GET', p)).text).toBe('ok');
  });

  it('serves the OpenAPI v3 index and documents, not v2', async () => {
    const index = await t.raw('GET', '/openapi/v3');
    const url = index.json.paths['apis/apps/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=/);
    const doc = await t.raw('GET', url);
    expect(doc.status).toBe(200);
    expect(doc.json.openapi).toMatch(/^3\./);
    expect((await t.raw('GET', '/openapi/v2')).status).toBe(404);
  });

  it('runs many clusters in one process, each with its own data', async () => {
    const other = await startTestCluster(backends[0]);
    try {
      await t.raw('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'only-here' } });
      expect((await other.raw('GET', '/api/v1/namespaces/default/configmaps/only-here')).status).toBe(404);
      expect(other.cluster.url).not.toBe(t.cluster.url);
    } finally {
      await other.stop();
    }
  });
});
