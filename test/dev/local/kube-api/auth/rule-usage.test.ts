import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthCluster,
  clusterRoleBinding,
  identity,
  pod,
  RBAC,
  startAuthCluster,
  unique,
  user,
} from './harness.ts';

describe('rule usage and denials', () => {
  let c: AuthCluster;
  let ns: string;
  const ROLE = 'reconciler-like';
  beforeAll(async () => {
    c = await startAuthCluster();
    ns = unique('usage');
    await c.admin('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    await c.admin('POST', `/apis/${RBAC}/v1/clusterroles`, {
      metadata: { name: ROLE },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'create'] },
        { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'], verbs: ['patch'] },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
      ],
    });
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/clusterrolebindings`,
      clusterRoleBinding('reconciler-like', ROLE, [user('reconciler')]),
    );
    c.cluster.authz!.reset();
  });
  afterAll(() => c?.stop());

  it('counts requests per allowing rule and lists what each rule granted but nobody used', async () => {
    const me = await identity('reconciler');
    expect((await c.raw(me, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('a'))).status).toBe(201);
    expect((await c.raw(me, 'GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(200);
    expect((await c.raw(me, 'GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(200);
    expect((await c.raw(me, 'PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/d/scale`, {})).status).not.toBe(403);
    expect((await c.raw(me, 'DELETE', `/api/v1/namespaces/${ns}/pods/a`)).status).toBe(403);

    const usage = c.cluster.authz!.usage().filter((u) => u.name === ROLE);
    expect(usage).toEqual([
      {
        kind: 'ClusterRole',
        name: ROLE,
        ruleIndex: 0,
        allowed: 3,
        escalationChecks: 0,
        permissions: ['create pods', 'list pods'],
      },
      {
        kind: 'ClusterRole',
        name: ROLE,
        ruleIndex: 1,
        allowed: 1,
        escalationChecks: 0,
        permissions: ['patch deployments.apps/scale'],
      },
    ]);
    const report = await c.cluster.authz!.report({ kind: 'ClusterRole', name: ROLE });
    expect(report.map((r) => [r.ruleIndex, r.allowed, r.unusedPermissions])).toEqual([
      [0, 3, ['get pods']],
      [1, 1, ['patch deployments.apps']],
      [2, 0, ['get leases.coordination.k8s.io']],
    ]);
    expect(report.filter((r) => r.allowed === 0).map((r) => r.rule)).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
    ]);

    const denials = c.cluster.authz!.denials();
    expect(denials).toHaveLength(1);
    expect(denials[0]).toMatchObject({
      user: 'reconciler',
      groups: ['system:authenticated'],
      attributes: {
        resourceRequest: true,
        verb: 'delete',
        apiGroup: '',
        namespace: ns,
        resource: 'pods',
        name: 'a',
        subresource: '',
      },
      message: `pods "a" is forbidden: User "reconciler" cannot delete resource "pods" in API group "" in the namespace "${ns}"`,
    });
  });

  it('does not count system:masters requests against rules, and reset() forgets everything', async () => {
    await c.admin('GET', `/api/v1/namespaces/${ns}/pods`);
    expect(c.cluster.authz!.usage().some((u) => u.name === 'cluster-admin')).toBe(false);
    c.cluster.authz!.reset();
    expect(c.cluster.authz!.usage()).toEqual([]);
    expect(c.cluster.authz!.denials()).toEqual([]);
    expect(await c.cluster.authz!.report({ kind: 'ClusterRole', name: 'no-such-role' })).toEqual([]);
  });

  it('decides for a user without a request', async () => {
    const attrs = {
      resourceRequest: true as const,
      verb: 'get',
      apiGroup: 'coordination.k8s.io',
      apiVersion: 'v1',
      namespace: ns,
      resource: 'leases',
      subresource: '',
      name: 'x',
    };
    expect(await c.cluster.authz!.authorize({ name: 'reconciler', groups: ['system:authenticated'] }, attrs)).toEqual({
      allowed: true,
      by: { kind: 'ClusterRole', name: ROLE, ruleIndex: 2 },
      binding: 'ClusterRoleBinding reconciler-like',
    });
    expect(await c.cluster.authz!.authorize({ name: 'someone', groups: [] }, attrs)).toEqual({
      allowed: false,
      reason: '',
    });
  });
});
