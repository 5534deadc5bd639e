import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthCluster,
  clusterRoleBinding,
  forbiddenStatus,
  group,
  identity,
  pod,
  RBAC,
  roleBinding,
  startAuthCluster,
  unique,
  user,
} from './harness.ts';

describe('RBAC authorization', () => {
  let c: AuthCluster;
  let ns: string;
  beforeAll(async () => {
    c = await startAuthCluster();
    ns = unique('rbac');
    await c.admin('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    await c.admin('POST', `/api/v1/namespaces/${ns}/pods`, pod('p1'));
    await c.admin('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'allowed' } });
    await c.admin('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'other' } });
  });
  afterAll(() => c?.stop());

  it("forbids an authenticated user with no bindings, with kube's Status", async () => {
    const nobody = await identity('nobody');
    const res = await c.raw(nobody, 'GET', `/api/v1/namespaces/${ns}/pods`);
    expect(res.status).toBe(403);
    expect(res.json).toEqual(
      forbiddenStatus(
        `pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "${ns}"`,
        { kind: 'pods' },
      ),
    );
    const node = await c.raw(nobody, 'GET', '/api/v1/nodes/n1');
    expect(node.json.message).toBe(
      'nodes "n1" is forbidden: User "nobody" cannot get resource "nodes" in API group "" at the cluster scope',
    );
    expect(node.json.details).toEqual({ name: 'n1', kind: 'nodes' });
    const path = await c.raw(nobody, 'GET', '/metrics');
    expect(path.status).toBe(403);
    expect(path.json.message).toBe('forbidden: User "nobody" cannot get path "/metrics"');
    const deploy = await c.raw(nobody, 'PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/d/scale`, {});
    expect(deploy.json.message).toBe(
      `deployments.apps "d" is forbidden: User "nobody" cannot patch resource "deployments/scale" in API group "apps" in the namespace "${ns}"`,
    );
    expect(deploy.json.details).toEqual({ name: 'd', group: 'apps', kind: 'deployments' });
  });

  it('lets every authenticated user read discovery and health (system:discovery, system:public-info-viewer)', async () => {
    const nobody = await identity('nobody');
    for (const path of ['/api', '/apis', '/api/v1', '/apis/apps/v1', '/version', '/openapi/v3', '/healthz']) {
      expect((await c.raw(nobody, 'GET', path)).status, path).toBe(200);
    }
  });

  it("view: reads allowed, writes forbidden with kube's message", async () => {
    const viewer = await identity('viewer');
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`,
      roleBinding(ns, 'viewer', { kind: 'ClusterRole', name: 'view' }, [user('viewer')]),
    );
    expect((await c.raw(viewer, 'GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(200);
    expect((await c.raw(viewer, 'GET', `/api/v1/namespaces/${ns}/pods/p1`)).status).toBe(200);
    expect((await c.raw(viewer, 'GET', `/api/v1/namespaces/${ns}/pods?watch=true&timeoutSeconds=1`)).status).toBe(200);
    const create = await c.raw(viewer, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('p2'));
    expect(create.status).toBe(403);
    expect(create.json.message).toBe(
      `pods is forbidden: User "viewer" cannot create resource "pods" in API group "" in the namespace "${ns}"`,
    );
    const del = await c.raw(viewer, 'DELETE', `/api/v1/namespaces/${ns}/pods/p1`);
    expect(del.json.message).toBe(
      `pods "p1" is forbidden: User "viewer" cannot delete resource "pods" in API group "" in the namespace "${ns}"`,
    );
    const delAll = await c.raw(viewer, 'DELETE', `/api/v1/namespaces/${ns}/pods`);
    expect(delAll.json.message).toContain('cannot deletecollection resource "pods"');
    const secrets = await c.raw(viewer, 'GET', `/api/v1/namespaces/${ns}/secrets`);
    expect(secrets.status).toBe(403);
    // The RoleBinding grants nothing in another namespace.
    expect((await c.raw(viewer, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(403);
    // The namespace object itself is "in" the namespace, so the RoleBinding covers it.
    expect((await c.raw(viewer, 'GET', `/api/v1/namespaces/${ns}`)).status).toBe(200);
    expect((await c.raw(viewer, 'GET', '/api/v1/namespaces/default')).status).toBe(403);
  });

  it('a node bound to admin writes Pods in a namespace but not Nodes (admin grants nothing cluster-scoped)', async () => {
    const node = await identity('system:node:n1', ['system:nodes']);
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/clusterrolebindings`,
      clusterRoleBinding(unique('nodes-admin'), 'admin', [group('system:nodes')]),
    );
    // The binding is effective for the very next request: no cache delay.
    const created = await c.raw(node, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('from-node'));
    expect(created.status).toBe(201);
    // As in kube, admin (via edit) has no write on pods/status: a kubelet's status updates need more.
    const status = await c.raw(node, 'PUT', `/api/v1/namespaces/${ns}/pods/from-node/status`, created.json);
    expect(status.json.message).toBe(
      `pods "from-node" is forbidden: User "system:node:n1" cannot update resource "pods/status" in API group "" in the namespace "${ns}"`,
    );
    expect(
      (
        await c.raw(node, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
          metadata: { name: 'n1' },
          spec: {},
        })
      ).status,
    ).toBe(201);
    const nodeWrite = await c.raw(node, 'POST', '/api/v1/nodes', { metadata: { name: 'n1' } });
    expect(nodeWrite.status).toBe(403);
    expect(nodeWrite.json.message).toBe(
      'nodes is forbidden: User "system:node:n1" cannot create resource "nodes" in API group "" at the cluster scope',
    );
  });

  it('sees a deleted binding at once', async () => {
    const temp = await identity('temp');
    const name = unique('temp');
    await c.admin('POST', `/apis/${RBAC}/v1/clusterrolebindings`, clusterRoleBinding(name, 'view', [user('temp')]));
    expect((await c.raw(temp, 'GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(200);
    await c.admin('DELETE', `/apis/${RBAC}/v1/clusterrolebindings/${name}`);
    expect((await c.raw(temp, 'GET', `/api/v1/namespaces/${ns}/pods`)).status).toBe(403);
  });

  it('aggregates ClusterRoles selected by label, at once and into the stored role', async () => {
    const agg = await identity('agg-user');
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/clusterrolebindings`,
      clusterRoleBinding(unique('agg'), 'view', [user('agg-user')]),
    );
    expect((await c.raw(agg, 'GET', '/api/v1/nodes')).status).toBe(403);
    const rule = { apiGroups: [''], resources: ['nodes'], verbs: ['list'] };
    await c.admin('POST', `/apis/${RBAC}/v1/clusterroles`, {
      metadata: { name: unique('node-lister'), labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [rule],
    });
    expect((await c.raw(agg, 'GET', '/api/v1/nodes')).status).toBe(200);
    // view aggregates into edit, edit into admin.
    await c.cluster.authz!.aggregated();
    for (const role of ['view', 'edit', 'admin']) {
      const stored = await c.admin('GET', `/apis/${RBAC}/v1/clusterroles/${role}`);
      expect(stored.rules, role).toContainEqual(rule);
    }
  });

  it('resourceNames restrict gets, and list/watch only with a metadata.name field selector', async () => {
    const named = await identity('named');
    await c.admin('POST', `/apis/${RBAC}/v1/namespaces/${ns}/roles`, {
      metadata: { name: 'one-cm' },
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          resourceNames: ['allowed'],
          verbs: ['get', 'list', 'watch', 'create'],
        },
      ],
    });
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`,
      roleBinding(ns, 'one-cm', { kind: 'Role', name: 'one-cm' }, [user('named')]),
    );
    expect((await c.raw(named, 'GET', `/api/v1/namespaces/${ns}/configmaps/allowed`)).status).toBe(200);
    expect((await c.raw(named, 'GET', `/api/v1/namespaces/${ns}/configmaps/other`)).status).toBe(403);
    expect((await c.raw(named, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status).toBe(403);
    const byName = await c.raw(
      named,
      'GET',
      `/api/v1/namespaces/${ns}/configmaps?fieldSelector=metadata.name%3Dallowed`,
    );
    expect(byName.status).toBe(200);
    expect(byName.json.items.map((i: any) => i.metadata.name)).toEqual(['allowed']);
    // A create names no object in the URL, so resourceNames never match it.
    expect(
      (await c.raw(named, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'allowed2' } })).status,
    ).toBe(403);
  });

  it('subresource rules: pods/status is not pods, and */status covers every status', async () => {
    const status = await identity('status-writer');
    await c.admin('POST', `/apis/${RBAC}/v1/namespaces/${ns}/roles`, {
      metadata: { name: 'status-only' },
      rules: [
        { apiGroups: [''], resources: ['pods/status'], verbs: ['get'] },
        { apiGroups: ['apps'], resources: ['*/status'], verbs: ['get'] },
      ],
    });
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`,
      roleBinding(ns, 'status', { kind: 'Role', name: 'status-only' }, [user('status-writer')]),
    );
    expect((await c.raw(status, 'GET', `/api/v1/namespaces/${ns}/pods/p1/status`)).status).toBe(200);
    expect((await c.raw(status, 'GET', `/api/v1/namespaces/${ns}/pods/p1`)).status).toBe(403);
    expect((await c.raw(status, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments/none/status`)).status).toBe(404);
    expect((await c.raw(status, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments/none`)).status).toBe(403);
  });

  it('ServiceAccount subjects match system:serviceaccount:<ns>:<name>, and the service-account groups match Group subjects', async () => {
    const sa = await identity(`system:serviceaccount:${ns}:robot`, [
      'system:serviceaccounts',
      `system:serviceaccounts:${ns}`,
    ]);
    const otherSa = await identity('system:serviceaccount:elsewhere:robot', [
      'system:serviceaccounts',
      'system:serviceaccounts:elsewhere',
    ]);
    // No namespace on the subject: the binding's own namespace.
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`,
      roleBinding(ns, 'robot', { kind: 'ClusterRole', name: 'edit' }, [{ kind: 'ServiceAccount', name: 'robot' }]),
    );
    expect(
      (await c.raw(sa, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'by-robot' } })).status,
    ).toBe(201);
    expect((await c.raw(otherSa, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status).toBe(403);
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/clusterrolebindings`,
      clusterRoleBinding(unique('sas'), 'view', [group('system:serviceaccounts:elsewhere')]),
    );
    expect((await c.raw(otherSa, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status).toBe(200);
  });

  it('a binding to a missing role denies, naming the role in the reason', async () => {
    const ghost = await identity('ghost');
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`,
      roleBinding(ns, 'ghost', { kind: 'ClusterRole', name: 'no-such-role' }, [user('ghost')]),
    );
    const res = await c.raw(ghost, 'GET', `/api/v1/namespaces/${ns}/pods`);
    expect(res.status).toBe(403);
    expect(res.json.message).toBe(
      `pods is forbidden: User "ghost" cannot list resource "pods" in API group "" in the namespace "${ns}": RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found`,
    );
  });

  it("answers SelfSubjectAccessReviews with the authorizer's decision", async () => {
    const viewer = await identity('viewer');
    const ask = async (resourceAttributes: Record<string, string>) =>
      (
        await c.raw(viewer, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes },
        })
      ).json.status;
    expect(await ask({ namespace: ns, verb: 'list', resource: 'pods' })).toEqual({
      allowed: true,
      reason: `RBAC: allowed by RoleBinding ${ns}/viewer of ClusterRole "view"`,
    });
    expect(await ask({ namespace: ns, verb: 'create', resource: 'pods' })).toEqual({ allowed: false });
    const bad = await c.raw(viewer, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: {} });
    expect(bad.status).toBe(400);
  });

  it('impersonation: allowed for system:masters, forbidden without the impersonate verb', async () => {
    const as = { 'Impersonate-User': 'viewer' };
    expect((await c.raw(c.pki.admin, 'GET', `/api/v1/namespaces/${ns}/pods`, undefined, as)).status).toBe(200);
    const create = await c.raw(c.pki.admin, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('imp'), as);
    expect(create.json.message).toBe(
      `pods is forbidden: User "viewer" cannot create resource "pods" in API group "" in the namespace "${ns}"`,
    );
    const who = await c.raw(
      c.pki.admin,
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      {},
      { 'Impersonate-User': `system:serviceaccount:${ns}:robot` },
    );
    expect(who.json.status.userInfo).toEqual({
      username: `system:serviceaccount:${ns}:robot`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
    });
    const grouped = await c.raw(
      c.pki.admin,
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      {},
      { 'Impersonate-User': 'x', 'Impersonate-Group': ['g1', 'g2'] },
    );
    expect(grouped.json.status.userInfo).toEqual({ username: 'x', groups: ['g1', 'g2', 'system:authenticated'] });

    const nobody = await identity('nobody');
    const denied = await c.raw(nobody, 'GET', `/api/v1/namespaces/${ns}/pods`, undefined, as);
    expect(denied.status).toBe(403);
    expect(denied.json.message).toBe(
      'users "viewer" is forbidden: User "nobody" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    expect((await c.raw(c.pki.admin, 'GET', '/api/v1/nodes', undefined, { 'Impersonate-Group': 'g' })).status).toBe(
      400,
    );

    // A rule granting impersonate of one user lets exactly that through.
    await c.admin('POST', `/apis/${RBAC}/v1/clusterroles`, {
      metadata: { name: 'impersonate-viewer' },
      rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['viewer'] }],
    });
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/clusterrolebindings`,
      clusterRoleBinding('nobody-as-viewer', 'impersonate-viewer', [user('nobody')]),
    );
    expect((await c.raw(nobody, 'GET', `/api/v1/namespaces/${ns}/pods`, undefined, as)).status).toBe(200);
    expect(
      (await c.raw(nobody, 'GET', `/api/v1/namespaces/${ns}/pods`, undefined, { 'Impersonate-User': 'test-admin' }))
        .status,
    ).toBe(403);
  });
});
