/**
 * RBAC escalation prevention over HTTPS, as kube-apiserver's RBAC storage enforces it: a Role, ClusterRole
 * or binding may only grant what its writer holds, unless the writer has `escalate` / `bind`, or is in
 * system:masters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../../../../dev/local/kube-api/auth/types.ts';
import type { CertAndKey } from '../../../../../dev/local/pki.ts';
import {
  type AuthCluster,
  clusterRoleBinding,
  forbiddenStatus,
  identity,
  RBAC,
  roleBinding,
  startAuthCluster,
  unique,
  user,
} from './harness.ts';

const API = `/apis/${RBAC}/v1`;
const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
  verbs,
});
const role = (ns: string, name: string, rules: PolicyRule[]) => ({
  apiVersion: `${RBAC}/v1`,
  kind: 'Role',
  metadata: { name, namespace: ns },
  rules,
});
const clusterRole = (name: string, rules: PolicyRule[], extra: Record<string, unknown> = {}) => ({
  apiVersion: `${RBAC}/v1`,
  kind: 'ClusterRole',
  metadata: { name },
  rules,
  ...extra,
});
const groupsOf = (name: string) =>
  `user "${name}" (groups=["team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n`;

describe('RBAC escalation prevention', () => {
  let c: AuthCluster;
  let nsA: string;
  let nsB: string;
  /** Holds RBAC write rights cluster-wide, and narrow rights in nsA only. */
  let writer: CertAndKey;
  let writerName: string;

  /** Binds `name` (group `team`) to rbac-writer cluster-wide and to `rules` in nsA. */
  async function rbacWriter(name: string, rules: PolicyRule[]): Promise<CertAndKey> {
    await c.admin(
      'POST',
      `${API}/clusterrolebindings`,
      clusterRoleBinding(unique('rbac-writer'), 'rbac-writer', [user(name)]),
    );
    const narrow = unique('narrow');
    await c.admin('POST', `${API}/namespaces/${nsA}/roles`, role(nsA, narrow, rules));
    await c.admin(
      'POST',
      `${API}/namespaces/${nsA}/rolebindings`,
      roleBinding(nsA, narrow, { kind: 'Role', name: narrow }, [user(name)]),
    );
    return identity(name, ['team']);
  }

  beforeAll(async () => {
    c = await startAuthCluster();
    nsA = unique('esc-a');
    nsB = unique('esc-b');
    for (const ns of [nsA, nsB]) await c.admin('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    // Enough to reach the RBAC storage (the request itself is authorized), nothing else.
    await c.admin(
      'POST',
      `${API}/clusterroles`,
      clusterRole('rbac-writer', [
        rule(
          ['get', 'list', 'create', 'update', 'patch', 'delete'],
          [RBAC],
          ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'],
        ),
      ]),
    );
    writerName = unique('writer');
    writer = await rbacWriter(writerName, [
      rule(['get', 'list'], [''], ['configmaps']),
      rule(['get'], [''], ['secrets'], ['s1']),
    ]);
    c.cluster.authz!.reset();
  });
  afterAll(() => c?.stop());

  it('creates a Role with a subset of the rules held, and counts the rule that covered it', async () => {
    const res = await c.raw(
      writer,
      'POST',
      `${API}/namespaces/${nsA}/roles`,
      role(nsA, 'subset', [rule(['get'], [''], ['configmaps'], ['cm1']), rule(['get'], [''], ['secrets'], ['s1'])]),
    );
    expect(res.status, res.text).toBe(201);
    const usage = c.cluster
      .authz!.usage()
      .filter((u) => u.kind === 'Role' && u.namespace === nsA && u.name.startsWith('narrow'));
    expect(usage.map((u) => [u.ruleIndex, u.allowed, u.escalationChecks, u.permissions])).toEqual([
      [0, 0, 1, ['get configmaps']],
      [1, 0, 1, ['get secrets']],
    ]);
  });

  it('refuses a Role with one more verb, resource or a nameless grant, listing exactly what is missing', async () => {
    const extraVerb = await c.raw(
      writer,
      'POST',
      `${API}/namespaces/${nsA}/roles`,
      role(nsA, 'more-verbs', [rule(['get', 'watch'], [''], ['configmaps'])]),
    );
    expect(extraVerb.status).toBe(403);
    expect(extraVerb.json).toEqual(
      forbiddenStatus(
        `roles.rbac.authorization.k8s.io "more-verbs" is forbidden: ${groupsOf(writerName)}{APIGroups:[""], Resources:["configmaps"], Verbs:["watch"]}`,
        { name: 'more-verbs', group: RBAC, kind: 'roles' },
      ),
    );
    const extraResource = await c.raw(
      writer,
      'POST',
      `${API}/namespaces/${nsA}/roles`,
      role(nsA, 'more-resources', [rule(['get', 'list', 'delete'], [''], ['configmaps', 'pods'])]),
    );
    expect(extraResource.json.message).toBe(
      `roles.rbac.authorization.k8s.io "more-resources" is forbidden: ${groupsOf(writerName)}` +
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["pods"], Verbs:["get" "list" "delete"]}',
    );
    // The writer holds secrets only by name: neither another name nor every name is covered.
    const otherName = await c.raw(
      writer,
      'POST',
      `${API}/namespaces/${nsA}/roles`,
      role(nsA, 'other-name', [rule(['get'], [''], ['secrets'], ['s2'])]),
    );
    expect(otherName.json.message).toMatch(
      /\{APIGroups:\[""\], Resources:\["secrets"\], ResourceNames:\["s2"\], Verbs:\["get"\]\}$/,
    );
    const nameless = await c.raw(
      writer,
      'POST',
      `${API}/namespaces/${nsA}/roles`,
      role(nsA, 'nameless', [rule(['get'], [''], ['secrets'])]),
    );
    expect(nameless.json.message).toMatch(/\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$/);
    for (const name of ['more-verbs', 'more-resources', 'other-name', 'nameless']) {
      expect((await c.raw(c.pki.admin, 'GET', `${API}/namespaces/${nsA}/roles/${name}`)).status).toBe(404);
    }
    const denial = c.cluster.authz!.denials().find((d) => d.message.includes('"more-verbs"'));
    expect(denial).toMatchObject({
      user: writerName,
      groups: ['team', 'system:authenticated'],
      attributes: { verb: 'create', resource: 'roles', namespace: nsA },
    });
  });

  it('checks updates (PUT, merge patch) and server-side apply, which creates through a patch', async () => {
    const current = await c.admin('GET', `${API}/namespaces/${nsA}/roles/subset`);
    const put = await c.raw(writer, 'PUT', `${API}/namespaces/${nsA}/roles/subset`, {
      ...current,
      rules: [rule(['get', 'delete'], [''], ['configmaps'])],
    });
    expect(put.status).toBe(403);
    expect(put.json.message).toContain('{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}');
    const merge = await c.raw(
      writer,
      'PATCH',
      `${API}/namespaces/${nsA}/roles/subset`,
      { rules: [rule(['list'], [''], ['configmaps'])] },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(merge.status, merge.text).toBe(200);

    const apply = (name: string, rules: PolicyRule[]) =>
      c.raw(writer, 'PATCH', `${API}/namespaces/${nsA}/roles/${name}?fieldManager=test`, role(nsA, name, rules), {
        'content-type': 'application/apply-patch+yaml',
      });
    const refused = await apply('applied', [rule(['create'], [''], ['configmaps'])]);
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe(
      `roles.rbac.authorization.k8s.io "applied" is forbidden: ${groupsOf(writerName)}{APIGroups:[""], Resources:["configmaps"], Verbs:["create"]}`,
    );
    expect((await apply('applied', [rule(['get'], [''], ['configmaps'])])).status).toBe(201);
    expect((await apply('applied', [rule(['get', 'list'], [''], ['configmaps'])])).status).toBe(200);
    expect((await apply('applied', [rule(['get', 'list', 'watch'], [''], ['configmaps'])])).status).toBe(403);
  });

  it('lets an update through that only touches the fields the garbage collector writes', async () => {
    await c.admin('POST', `${API}/namespaces/${nsA}/roles`, role(nsA, 'big', [rule(['*'], ['*'], ['*'])]));
    const patch = (body: unknown) =>
      c.raw(writer, 'PATCH', `${API}/namespaces/${nsA}/roles/big`, body, {
        'content-type': 'application/merge-patch+json',
      });
    expect((await patch({ metadata: { finalizers: ['example.com/keep'] } })).status).toBe(200);
    expect((await patch({ metadata: { finalizers: null } })).status).toBe(200);
    expect((await patch({ metadata: { labels: { x: 'y' } } })).status).toBe(403);
    // Deletes are not checked, as in kube.
    expect((await c.raw(writer, 'DELETE', `${API}/namespaces/${nsA}/roles/big`)).status).toBe(200);
  });

  it('allows any Role with `escalate` on roles there, and only there', async () => {
    const name = unique('escalator');
    const escalator = await rbacWriter(name, [rule(['escalate'], [RBAC], ['roles'])]);
    const wide = [rule(['delete'], [''], ['secrets'])];
    expect(
      (await c.raw(escalator, 'POST', `${API}/namespaces/${nsA}/roles`, role(nsA, 'escalated', wide))).status,
    ).toBe(201);
    const elsewhere = await c.raw(escalator, 'POST', `${API}/namespaces/${nsB}/roles`, role(nsB, 'escalated', wide));
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json.message).toContain('is attempting to grant RBAC permissions not currently held');
    expect(
      c.cluster
        .authz!.usage()
        .find((u) => u.kind === 'Role' && u.namespace === nsA && u.permissions.includes(`escalate roles.${RBAC}`)),
    ).toMatchObject({ allowed: 1 });
  });

  it('scopes the rules held: a Role counts the RoleBindings of its namespace, a ClusterRole only cluster-wide bindings', async () => {
    const cmGet = [rule(['get'], [''], ['configmaps'])];
    expect((await c.raw(writer, 'POST', `${API}/namespaces/${nsA}/roles`, role(nsA, 'scoped', cmGet))).status).toBe(
      201,
    );
    const inB = await c.raw(writer, 'POST', `${API}/namespaces/${nsB}/roles`, role(nsB, 'scoped', cmGet));
    expect(inB.status).toBe(403);
    const cr = await c.raw(writer, 'POST', `${API}/clusterroles`, clusterRole(unique('scoped'), cmGet));
    expect(cr.status).toBe(403);
    expect(cr.json.message).toMatch(/^clusterroles\.rbac\.authorization\.k8s\.io "scoped-[\d-]+" is forbidden: user /);
    expect(cr.json.details).toMatchObject({ group: RBAC, kind: 'clusterroles' });
    // What the writer holds cluster-wide (rbac-writer, and system:discovery's URLs) it may put in a ClusterRole.
    const held = await c.raw(
      writer,
      'POST',
      `${API}/clusterroles`,
      clusterRole(unique('held'), [
        rule(['get'], [RBAC], ['roles']),
        { verbs: ['get'], nonResourceURLs: ['/apis/example.com/v1'] },
      ]),
    );
    expect(held.status, held.text).toBe(201);
  });

  it('covers nonResourceURLs by prefix and subresources through `*/sub`', async () => {
    const name = unique('sub-writer');
    await c.admin(
      'POST',
      `${API}/clusterroles`,
      clusterRole(name, [rule(['get'], ['apps'], ['*/status', 'deployments/scale'])]),
    );
    await c.admin('POST', `${API}/clusterrolebindings`, clusterRoleBinding(name, name, [user(writerName)]));
    const ok = await c.raw(
      writer,
      'POST',
      `${API}/clusterroles`,
      clusterRole(unique('subs'), [
        rule(['get'], ['apps'], ['deployments/status', 'statefulsets/status', 'deployments/scale']),
      ]),
    );
    expect(ok.status, ok.text).toBe(201);
    const parent = await c.raw(
      writer,
      'POST',
      `${API}/clusterroles`,
      clusterRole(unique('parent'), [rule(['get'], ['apps'], ['deployments'])]),
    );
    expect(parent.json.message).toMatch(/\n\{APIGroups:\["apps"\], Resources:\["deployments"\], Verbs:\["get"\]\}$/);
    const urls = await c.raw(
      writer,
      'POST',
      `${API}/clusterroles`,
      clusterRole(unique('urls'), [{ verbs: ['get', 'post'], nonResourceURLs: ['/apis/x', '/metrics'] }]),
    );
    expect(urls.status).toBe(403);
    expect(urls.json.message.split('\n').slice(1)).toEqual([
      '{NonResourceURLs:["/apis/x"], Verbs:["post"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["post"]}',
    ]);
  });

  it('binds a role whose rules the writer holds, refuses a bigger one unless `bind` names it', async () => {
    await c.admin('POST', `${API}/clusterroles`, clusterRole('esc-small', [rule(['get'], [''], ['configmaps'])]));
    await c.admin(
      'POST',
      `${API}/clusterroles`,
      clusterRole('esc-big', [rule(['get', 'delete'], [''], ['configmaps'])]),
    );
    await c.admin(
      'POST',
      `${API}/clusterroles`,
      clusterRole('esc-big-2', [rule(['get', 'delete'], [''], ['configmaps'])]),
    );
    const bind = (as: CertAndKey, ns: string, name: string, roleRef: { kind: 'Role' | 'ClusterRole'; name: string }) =>
      c.raw(as, 'POST', `${API}/namespaces/${ns}/rolebindings`, roleBinding(ns, name, roleRef, [user('someone')]));

    expect((await bind(writer, nsA, 'small', { kind: 'ClusterRole', name: 'esc-small' })).status).toBe(201);
    expect((await bind(writer, nsA, 'own-role', { kind: 'Role', name: 'scoped' })).status).toBe(201);
    const big = await bind(writer, nsA, 'big', { kind: 'ClusterRole', name: 'esc-big' });
    expect(big.status).toBe(403);
    expect(big.json.message).toBe(
      `rolebindings.rbac.authorization.k8s.io "big" is forbidden: ${groupsOf(writerName)}{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}`,
    );
    expect(big.json.details).toEqual({ name: 'big', group: RBAC, kind: 'rolebindings' });
    // The writer's rules in nsA do not count in nsB, nor cluster-wide.
    expect((await bind(writer, nsB, 'small', { kind: 'ClusterRole', name: 'esc-small' })).status).toBe(403);
    const crb = await c.raw(
      writer,
      'POST',
      `${API}/clusterrolebindings`,
      clusterRoleBinding(unique('small'), 'esc-small', [user('someone')]),
    );
    expect(crb.status).toBe(403);
    expect(crb.json.message).toMatch(
      /^clusterrolebindings\.rbac\.authorization\.k8s\.io "small-[\d-]+" is forbidden: user .*\n\{APIGroups:\[""\], Resources:\["configmaps"\], Verbs:\["get"\]\}$/,
    );

    const binderName = unique('binder');
    const binder = await rbacWriter(binderName, [rule(['bind'], [RBAC], ['clusterroles'], ['esc-big'])]);
    expect((await bind(binder, nsA, 'big', { kind: 'ClusterRole', name: 'esc-big' })).status).toBe(201);
    const other = await bind(binder, nsA, 'big-2', { kind: 'ClusterRole', name: 'esc-big-2' });
    expect(other.status).toBe(403);
    expect(other.json.message).toContain(`user "${binderName}"`);
    // `bind` held in nsA authorizes bindings in nsA only.
    expect((await bind(binder, nsB, 'big', { kind: 'ClusterRole', name: 'esc-big' })).status).toBe(403);
  });

  it('answers a binding to a missing role with the lookup error, unless `bind` allows it', async () => {
    const missing = await c.raw(
      writer,
      'POST',
      `${API}/namespaces/${nsA}/rolebindings`,
      roleBinding(nsA, 'to-nothing', { kind: 'ClusterRole', name: 'no-such-role' }, [user('someone')]),
    );
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({
      reason: 'NotFound',
      message: 'clusterroles.rbac.authorization.k8s.io "no-such-role" not found',
      details: { name: 'no-such-role', group: RBAC, kind: 'clusterroles' },
    });
    const missingRole = await c.raw(
      writer,
      'POST',
      `${API}/namespaces/${nsA}/rolebindings`,
      roleBinding(nsA, 'to-nothing', { kind: 'Role', name: 'no-such-role' }, [user('someone')]),
    );
    expect(missingRole.json.message).toBe('roles.rbac.authorization.k8s.io "no-such-role" not found');
    const name = unique('any-binder');
    const anyBinder = await rbacWriter(name, [rule(['bind'], [RBAC], ['clusterroles'])]);
    expect(
      (
        await c.raw(
          anyBinder,
          'POST',
          `${API}/namespaces/${nsA}/rolebindings`,
          roleBinding(nsA, 'to-nothing', { kind: 'ClusterRole', name: 'no-such-role' }, [user('someone')]),
        )
      ).status,
    ).toBe(201);
  });

  it('needs `*` on everything (or `escalate`) for an aggregationRule', async () => {
    const aggregating = (name: string) =>
      clusterRole(name, [], {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' } }] },
      });
    const refused = await c.raw(writer, 'POST', `${API}/clusterroles`, aggregating('agg-writer'));
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe(
      'clusterroles.rbac.authorization.k8s.io "agg-writer" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    );

    const adminName = unique('rbac-admin');
    await c.admin(
      'POST',
      `${API}/clusterrolebindings`,
      clusterRoleBinding(adminName, 'cluster-admin', [user(adminName)]),
    );
    const clusterAdmin = await identity(adminName, ['team']);
    expect((await c.raw(clusterAdmin, 'POST', `${API}/clusterroles`, aggregating('agg-admin'))).status).toBe(201);

    const escName = unique('cr-escalator');
    await c.admin('POST', `${API}/clusterroles`, clusterRole(escName, [rule(['escalate'], [RBAC], ['clusterroles'])]));
    await c.admin('POST', `${API}/clusterrolebindings`, clusterRoleBinding(escName, escName, [user(escName)]));
    await c.admin(
      'POST',
      `${API}/clusterrolebindings`,
      clusterRoleBinding(unique('rbac-writer'), 'rbac-writer', [user(escName)]),
    );
    const escalator = await identity(escName, ['team']);
    expect((await c.raw(escalator, 'POST', `${API}/clusterroles`, aggregating('agg-escalate'))).status).toBe(201);

    // Removing an aggregationRule needs the same: it can hold rules in place that no one may widen.
    const live = await c.admin('GET', `${API}/clusterroles/agg-admin`);
    const removed = await c.raw(writer, 'PUT', `${API}/clusterroles/agg-admin`, {
      ...live,
      aggregationRule: undefined,
      rules: [],
    });
    expect(removed.status).toBe(403);
    expect(removed.json.message).toContain('must have cluster-admin privileges to use the aggregationRule');
  });

  it('lets system:masters grant anything', async () => {
    const master = await identity(unique('master'), ['system:masters']);
    expect(
      (
        await c.raw(
          master,
          'POST',
          `${API}/namespaces/${nsB}/roles`,
          role(nsB, 'anything', [rule(['*'], ['*'], ['*'])]),
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await c.raw(
          master,
          'POST',
          `${API}/clusterrolebindings`,
          clusterRoleBinding(unique('anything'), 'cluster-admin', [user('someone')]),
        )
      ).status,
    ).toBe(201);
  });
});

describe('RBAC escalation prevention in AlwaysAllow mode', () => {
  it('is off: anyone may grant anything', async () => {
    const c = await startAuthCluster({ authorization: 'AlwaysAllow' });
    try {
      const nobody = await identity('nobody-special');
      expect(
        (await c.raw(nobody, 'POST', `${API}/clusterroles`, clusterRole('everything', [rule(['*'], ['*'], ['*'])])))
          .status,
      ).toBe(201);
      expect(
        (
          await c.raw(
            nobody,
            'POST',
            `${API}/clusterrolebindings`,
            clusterRoleBinding('everything', 'everything', [user('nobody-special')]),
          )
        ).status,
      ).toBe(201);
      expect(c.cluster.authz!.denials()).toEqual([]);
    } finally {
      await c.stop();
    }
  });
});
