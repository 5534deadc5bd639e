import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalCluster } from '../../../../../dev/local/kube-api/index.ts';
import { issueClientCertificate } from '../../../../../dev/local/pki.ts';
import { type AuthCluster, identity, startAuthCluster, testPki, unique } from './harness.ts';

const UNAUTHORIZED = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
};

describe('x509 client-certificate authentication', () => {
  let c: AuthCluster;
  beforeAll(async () => {
    c = await startAuthCluster();
  });
  afterAll(() => c?.stop());

  it('serves https', () => {
    expect(c.cluster.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers a request without a client certificate with a 401 Status', async () => {
    for (const path of ['/api/v1/namespaces', '/api', '/version', '/openapi/v2']) {
      const res = await c.raw(undefined, 'GET', path);
      expect(res.status, path).toBe(401);
      expect(res.json).toEqual(UNAUTHORIZED);
    }
  });

  it('lets anonymous requests reach the health checks only', async () => {
    for (const path of ['/healthz', '/livez', '/readyz'])
      expect((await c.raw(undefined, 'GET', path)).status, path).toBe(200);
    expect((await c.raw(undefined, 'GET', '/livez/ping')).status).toBe(401);
  });

  it('refuses a certificate signed by a CA it does not trust', async () => {
    const foreign = await issueClientCertificate(c.pki.stranger, { user: 'intruder', groups: ['system:masters'] });
    const res = await c.raw(foreign, 'GET', '/api/v1/namespaces');
    expect(res.status).toBe(401);
    expect(res.json).toEqual(UNAUTHORIZED);
  });

  it('refuses a certificate that is not for client authentication', async () => {
    const serverOnly = await issueClientCertificate(c.pki.ca, {
      user: 'server',
      groups: ['system:masters'],
      usages: ['serverAuth'],
    });
    expect((await c.raw(serverOnly, 'GET', '/api/v1/namespaces')).status).toBe(401);
  });

  it('lets system:masters do anything, Nodes and namespaces included', async () => {
    const ns = unique('adm');
    expect((await c.raw(c.pki.admin, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
    expect((await c.raw(c.pki.admin, 'POST', '/api/v1/nodes', { metadata: { name: unique('node') } })).status).toBe(
      201,
    );
    expect((await c.raw(c.pki.admin, 'GET', '/metrics')).status).toBe(404);
    expect(c.cluster.authz!.denials()).toEqual([]);
  });

  it('names the user by CN and the groups by O, plus system:authenticated', async () => {
    const me = await identity('alice', ['team-a', 'team-b']);
    const res = await c.raw(me, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    expect(res.status).toBe(201);
    expect(res.json.status.userInfo).toEqual({
      username: 'alice',
      groups: ['team-a', 'team-b', 'system:authenticated'],
    });
  });
});

describe('authentication options', () => {
  it('with anonymousPaths [] refuses even the health checks', async () => {
    const c = await startAuthCluster({ anonymousPaths: [] });
    try {
      expect((await c.raw(undefined, 'GET', '/livez')).status).toBe(401);
      expect((await c.raw(c.pki.admin, 'GET', '/livez')).status).toBe(200);
    } finally {
      await c.stop();
    }
  });

  it('AlwaysAllow authenticates but allows every authenticated user', async () => {
    const c = await startAuthCluster({ authorization: 'AlwaysAllow' });
    try {
      const nobody = await identity('nobody');
      expect((await c.raw(nobody, 'POST', '/api/v1/nodes', { metadata: { name: unique('n') } })).status).toBe(201);
      expect((await c.raw(undefined, 'GET', '/api/v1/nodes')).status).toBe(401);
      // No bootstrap policy is seeded without RBAC.
      expect((await c.raw(nobody, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles')).json.items).toEqual([]);
    } finally {
      await c.stop();
    }
  });

  it('rejects RBAC without TLS and malformed TLS options with errors naming the field', async () => {
    await expect(startLocalCluster({ authorization: 'RBAC' })).rejects.toThrow(/authorization: 'RBAC' needs `tls`/);
    await expect(startLocalCluster({ tls: { certPem: 'nope', keyPem: 'x', clientCaPems: [] } })).rejects.toThrow(
      /tls\.certPem: expected a PEM string/,
    );
    const { serving, ca } = await testPki();
    await expect(startLocalCluster({ tls: { ...serving, clientCaPems: [] } })).rejects.toThrow(
      /tls\.clientCaPems: expected a non-empty list/,
    );
    await expect(
      startLocalCluster({ tls: { ...serving, clientCaPems: [ca.certPem] }, authorization: 'Webhook' as never }),
    ).rejects.toThrow(/authorization: expected 'RBAC' or 'AlwaysAllow'/);
  });

  it('leaves plain-HTTP mode unauthenticated', async () => {
    const c = await startLocalCluster();
    try {
      expect(c.url).toMatch(/^http:/);
      expect(c.authz).toBeUndefined();
      expect((await fetch(`${c.url}/api/v1/nodes`)).status).toBe(200);
    } finally {
      await c.stop();
    }
  });
});
