/**
 * kube-apiserver's audit log as the request record (dev/local/real-cluster/audit-log.ts): every request of the
 * user under test, in order, with what the reconcile suites count (verb, resource, subresource, field manager,
 * dry run, status, the authorizer's decision); nobody else's; and never a Secret's data, which the Metadata level
 * keeps out of the file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpMethod, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { createCertificateAuthority } from '../../../../dev/local/pki.ts';
import { AuditRequestLog } from '../../../../dev/local/real-cluster/audit-log.ts';
import { type RealHostCluster, startRealHostCluster } from '../../../../dev/local/real-cluster/control-plane.ts';

const USER = 'audit-log-test-writer';
const SECRET_VALUE = 'do-not-log-me-7f3a9c';

describe('the audit log as the request record', () => {
  let cluster: RealHostCluster;
  let admin: RawObjectApi;
  let writer: RawObjectApi;
  let log: AuditRequestLog;

  beforeAll(async () => {
    cluster = await startRealHostCluster({
      name: 'audit-log',
      ca: await createCertificateAuthority('audit-log-ca'),
      auditLog: true,
      controllers: false,
    });
    admin = RawObjectApi.fromKubeConfig(cluster.kubeConfig);
    const kc = new KubeConfig();
    kc.loadFromString(await cluster.kubeconfigFor({ user: USER, groups: ['system:masters'] }));
    writer = RawObjectApi.fromKubeConfig(kc);
    if (!cluster.auditLogPath) throw new Error('no audit log path with auditLog: true');
    log = new AuditRequestLog(
      cluster.auditLogPath,
      (marker) => admin.requestJson(HttpMethod.GET, '/version', { query: { fence: marker } }),
      USER,
    );
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("records the user's requests in order with what the suites count, and no one else's", async () => {
    const mark = await log.mark();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'audited', namespace: 'default' },
      stringData: { token: SECRET_VALUE },
    } as KubernetesObject;
    await writer.applyJson(secret, 'audit-log-test', true);
    await writer.requestJson(HttpMethod.POST, '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' } },
      query: { dryRun: 'All' },
    });
    await writer.readJson({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'audited', namespace: 'default' } });
    // The admin's own write is someone else's: not in this user's record.
    await admin.applyJson(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'admins', namespace: 'default' } } as KubernetesObject,
      'admin',
      true,
    );

    const all = await log.since(mark);
    // The client's discovery (which resource a kind is) is a non-resource read: recorded, with its path.
    expect(all.filter((r) => !r.resource).every((r) => r.verb === 'get' && /^\/apis?\b/.test(r.path))).toBe(true);
    const records = all.filter((r) => r.resource);
    expect(records.map((r) => [r.verb, r.resource, r.name ?? '', r.status])).toEqual([
      ['patch', 'secrets', 'audited', 201],
      ['create', 'configmaps', 'dry', 201],
      ['get', 'secrets', 'audited', 200],
    ]);
    expect(records[0]).toMatchObject({ user: USER, fieldManager: 'audit-log-test', namespace: 'default' });
    expect(records[0]?.decision).toBe('allow');
    // The dry run is a request, not a write.
    expect((await log.writesSince(mark)).map((r) => r.resource)).toEqual(['secrets']);
  });

  it('holds no Secret data: the Metadata level writes no request or response bodies', async () => {
    await log.mark();
    const text = await readFile(cluster.auditLogPath ?? join(cluster.dir, 'audit.log'), 'utf8');
    expect(text).toContain('"resource":"secrets"');
    expect(text).not.toContain(SECRET_VALUE);
    expect(text).not.toContain(Buffer.from(SECRET_VALUE).toString('base64'));
  });
});
