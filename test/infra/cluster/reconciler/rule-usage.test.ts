import { describe, expect, it } from 'vitest';
import {
  type AuditedRequest,
  type PolicyRule,
  type ResourceAttributes,
  reportOf,
  roleOfReason,
  ruleAllows,
  ruleUsage,
} from './rule-usage.ts';

const attrs = (a: Partial<ResourceAttributes>): ResourceAttributes => ({
  verb: 'get',
  group: '',
  resource: 'pods',
  subresource: '',
  name: '',
  ...a,
});

describe('ruleAllows', () => {
  it('matches verb, group and resource exactly or by `*`', () => {
    const rule: PolicyRule = { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'patch'] };
    expect(ruleAllows(rule, attrs({ group: 'apps', resource: 'deployments', verb: 'patch' }))).toBe(true);
    expect(ruleAllows(rule, attrs({ group: 'apps', resource: 'deployments', verb: 'delete' }))).toBe(false);
    expect(ruleAllows(rule, attrs({ group: '', resource: 'deployments' }))).toBe(false);
    expect(ruleAllows(rule, attrs({ group: 'apps', resource: 'replicasets' }))).toBe(false);
    expect(
      ruleAllows({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, attrs({ group: 'x.io', verb: 'bind' })),
    ).toBe(true);
    // A rule without apiGroups (a nonResourceURLs rule) allows no resource request.
    expect(ruleAllows({ nonResourceURLs: ['*'], verbs: ['*'] }, attrs({}))).toBe(false);
  });

  it('matches a subresource only by `resource/sub`, `*/sub` or `*`, never by the resource alone', () => {
    const status = attrs({ group: 'poolspirit.io', resource: 'poolspirits', subresource: 'status', verb: 'patch' });
    const rule = (resources: string[]): PolicyRule => ({ apiGroups: ['poolspirit.io'], resources, verbs: ['patch'] });
    expect(ruleAllows(rule(['poolspirits/status']), status)).toBe(true);
    expect(ruleAllows(rule(['*/status']), status)).toBe(true);
    expect(ruleAllows(rule(['*']), status)).toBe(true);
    expect(ruleAllows(rule(['poolspirits']), status)).toBe(false);
    expect(ruleAllows(rule(['poolspirits/scale']), status)).toBe(false);
    expect(ruleAllows(rule(['poolspirits/status']), { ...status, subresource: '' })).toBe(false);
    // `*/sub` is no wildcard for the resource itself.
    expect(ruleAllows(rule(['*/status']), { ...status, subresource: '' })).toBe(false);
  });

  it('limits by resourceNames, which never match a request naming no object', () => {
    const rule: PolicyRule = {
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: ['a'],
      verbs: ['get', 'list'],
    };
    expect(ruleAllows(rule, attrs({ resource: 'configmaps', name: 'a' }))).toBe(true);
    expect(ruleAllows(rule, attrs({ resource: 'configmaps', name: 'b' }))).toBe(false);
    expect(ruleAllows(rule, attrs({ resource: 'configmaps', verb: 'list' }))).toBe(false);
    expect(ruleAllows({ ...rule, resourceNames: [] }, attrs({ resource: 'configmaps', name: 'b' }))).toBe(true);
  });
});

describe('roleOfReason', () => {
  it('reads the role from the binding kube names', () => {
    expect(roleOfReason('RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "g"')).toEqual({
      kind: 'ClusterRole',
      name: 'r',
    });
    expect(roleOfReason('RBAC: allowed by RoleBinding "b/kube-system" of Role "r" to Group "g"')).toEqual({
      kind: 'Role',
      name: 'r',
      namespace: 'kube-system',
    });
    expect(roleOfReason('RBAC: allowed by RoleBinding "b/ns" of ClusterRole "r" to User "u"')).toEqual({
      kind: 'ClusterRole',
      name: 'r',
    });
    expect(roleOfReason('')).toBeUndefined();
    expect(roleOfReason(undefined)).toBeUndefined();
  });
});

describe('ruleUsage', () => {
  const cluster = {
    kind: 'ClusterRole' as const,
    name: 'r',
    rules: [
      { apiGroups: ['poolspirit.io'], resources: ['poolspirits'], verbs: ['get', 'patch'] },
      { apiGroups: ['poolspirit.io'], resources: ['poolspirits', 'poolspirits/status'], verbs: ['get', 'create'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
    ],
  };
  const role = {
    kind: 'Role' as const,
    name: 'r',
    namespace: 'ns',
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    ],
  };
  const otherNs = { ...role, namespace: 'other' };
  const byCluster = 'RBAC: allowed by ClusterRoleBinding "r" of ClusterRole "r" to Group "g"';
  const byRole = (ns: string) => `RBAC: allowed by RoleBinding "r/${ns}" of Role "r" to Group "g"`;
  const spirit = (a: Partial<AuditedRequest>): AuditedRequest => ({
    verb: 'get',
    group: 'poolspirit.io',
    resource: 'poolspirits',
    name: 'p',
    status: 200,
    decision: 'allow',
    reason: byCluster,
    ...a,
  });

  it('counts a request for the first allowing rule of the named role, and lists what no request needed', () => {
    const usage = ruleUsage([cluster], [spirit({}), spirit({ verb: 'patch', status: 200 })]);
    expect(reportOf(usage, cluster)).toEqual([
      {
        ruleIndex: 0,
        rule: cluster.rules[0],
        allowed: 2,
        permissions: ['get poolspirits.poolspirit.io', 'patch poolspirits.poolspirit.io'],
        unusedPermissions: [],
      },
      {
        ruleIndex: 1,
        rule: cluster.rules[1],
        allowed: 0,
        permissions: [],
        unusedPermissions: [
          'get poolspirits.poolspirit.io',
          'get poolspirits.poolspirit.io/status',
          'create poolspirits.poolspirit.io',
          'create poolspirits.poolspirit.io/status',
        ],
      },
      { ruleIndex: 2, rule: cluster.rules[2], allowed: 0, permissions: [], unusedPermissions: ['get nodes'] },
    ]);
  });

  it('counts a server-side apply that created (patch, 201) as a create too, in the named role first', () => {
    const report = reportOf(ruleUsage([cluster], [spirit({ verb: 'patch', status: 201 })]), cluster);
    expect(report.map((r) => [r.allowed, r.permissions])).toEqual([
      [1, ['patch poolspirits.poolspirit.io']],
      [1, ['create poolspirits.poolspirit.io']],
      [0, []],
    ]);
  });

  it("finds the create of an apply in another role of the request's namespace when the named one lacks it", () => {
    const patchOnly = { ...cluster, rules: [cluster.rules[0]] };
    const configmap: AuditedRequest = {
      verb: 'patch',
      group: '',
      resource: 'configmaps',
      namespace: 'ns',
      name: 'c',
      status: 201,
      decision: 'allow',
      reason: byRole('ns'),
    };
    const usage = ruleUsage([patchOnly, otherNs, role], [configmap]);
    expect(reportOf(usage, role).map((r) => r.permissions)).toEqual([['patch configmaps'], ['create configmaps']]);
    // A Role of another namespace is never a candidate, even listed first.
    expect(reportOf(usage, otherNs).map((r) => r.allowed)).toEqual([0, 0]);
  });

  it('ignores refused requests, requests allowed by other roles, and non-resource requests', () => {
    const usage = ruleUsage(
      [cluster, role],
      [
        spirit({ decision: 'forbid', reason: '', status: 403 }),
        spirit({ reason: 'RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "x" to Group "g"' }),
        spirit({ reason: byRole('elsewhere') }),
        { verb: 'get', status: 200, decision: 'allow', reason: byCluster },
      ],
    );
    expect([...reportOf(usage, cluster), ...reportOf(usage, role)].map((r) => r.allowed)).toEqual([0, 0, 0, 0, 0]);
    expect(reportOf(usage, { kind: 'ClusterRole', name: 'missing' })).toEqual([]);
  });

  it('still counts a request whose handler refused it after authorization (an apply refused its create)', () => {
    const usage = ruleUsage([cluster], [spirit({ verb: 'patch', status: 403 })]);
    expect(reportOf(usage, cluster)[0]).toMatchObject({ allowed: 1, permissions: ['patch poolspirits.poolspirit.io'] });
  });
});
