import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../../../dev/local/kube-api/index.ts';
import { type AuthCluster, RBAC, startAuthCluster } from './harness.ts';

describe('bootstrap RBAC policy', () => {
  let c: AuthCluster;
  beforeAll(async () => {
    c = await startAuthCluster();
  });
  afterAll(() => c?.stop());

  const role = (name: string) => c.admin('GET', `/apis/${RBAC}/v1/clusterroles/${name}`);

  it("seeds kube's user-facing ClusterRoles and bindings, labelled as kube labels them", async () => {
    const roles = await c.admin(
      'GET',
      `/apis/${RBAC}/v1/clusterroles?labelSelector=kubernetes.io%2Fbootstrapping%3Drbac-defaults`,
    );
    expect(roles.items.map((r: any) => r.metadata.name).sort()).toEqual([
      'admin',
      'cluster-admin',
      'edit',
      'system:aggregate-to-admin',
      'system:aggregate-to-edit',
      'system:aggregate-to-view',
      'system:basic-user',
      'system:discovery',
      'system:public-info-viewer',
      'view',
    ]);
    for (const r of roles.items)
      expect(r.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate']).toBe('true');
    const bindings = await c.admin('GET', `/apis/${RBAC}/v1/clusterrolebindings`);
    const byName = Object.fromEntries(bindings.items.map((b: any) => [b.metadata.name, b]));
    expect(byName['cluster-admin'].subjects).toEqual([{ apiGroup: RBAC, kind: 'Group', name: 'system:masters' }]);
    expect(byName['system:discovery'].subjects).toEqual([
      { apiGroup: RBAC, kind: 'Group', name: 'system:authenticated' },
    ]);
    expect(byName['system:basic-user'].subjects).toEqual([
      { apiGroup: RBAC, kind: 'Group', name: 'system:authenticated' },
    ]);
    expect(byName['system:public-info-viewer'].subjects.map((s: any) => s.name)).toEqual([
      'system:authenticated',
      'system:unauthenticated',
    ]);
    for (const b of bindings.items)
      expect(b.metadata.labels).toEqual({ 'kubernetes.io/bootstrapping': 'rbac-defaults' });
  });

  it("aggregates view ⊂ edit ⊂ admin with kube's rules", async () => {
    const [view, edit, admin] = [await role('view'), await role('edit'), await role('admin')];
    expect(view.aggregationRule).toEqual({
      clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }],
    });
    expect(view.rules).toEqual((await role('system:aggregate-to-view')).rules);
    expect(view.rules).toHaveLength(10);
    for (const rule of view.rules) expect(edit.rules).toContainEqual(rule);
    for (const rule of edit.rules) expect(admin.rules).toContainEqual(rule);
    expect(edit.rules).toContainEqual({ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] });
    expect(admin.rules).toContainEqual({
      apiGroups: [RBAC],
      resources: ['rolebindings', 'roles'],
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    });
    // edit = aggregate-to-edit (13) + view (10); admin = edit (23) + aggregate-to-admin (2), in role-name order.
    expect(edit.rules).toHaveLength(23);
    expect(admin.rules).toEqual([...edit.rules, ...(await role('system:aggregate-to-admin')).rules]);
    expect((await role('cluster-admin')).rules).toEqual([
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]);
  });
});

describe('bootstrap RBAC policy on restart', () => {
  it('keeps what the storage holds and creates only what is missing', async () => {
    const storage = createMemoryStorage();
    const first = await startAuthCluster({ storage });
    try {
      const discovery = await first.admin('GET', `/apis/${RBAC}/v1/clusterroles/system:discovery`);
      discovery.rules = [{ nonResourceURLs: ['/version'], verbs: ['get'] }];
      await first.admin('PUT', `/apis/${RBAC}/v1/clusterroles/system:discovery`, discovery);
      await first.admin('DELETE', `/apis/${RBAC}/v1/clusterroles/system:basic-user`);
    } finally {
      await first.stop();
    }
    const second = await startAuthCluster({ storage });
    try {
      expect((await second.admin('GET', `/apis/${RBAC}/v1/clusterroles/system:discovery`)).rules).toEqual([
        { nonResourceURLs: ['/version'], verbs: ['get'] },
      ]);
      expect((await second.admin('GET', `/apis/${RBAC}/v1/clusterroles/system:basic-user`)).rules).toHaveLength(2);
    } finally {
      await second.stop();
      await storage.close();
    }
  });
});
