/**
 * Which RBAC rule allowed each request, read back from kube-apiserver's audit log, so a test can prove a
 * role is the least privilege: every rule, and every verb × resource a rule grants, was needed.
 *
 * The audit annotation `authorization.k8s.io/reason` names the binding and role that allowed a request,
 * not the rule. RBAC stops at the first rule of that role that allows the request, so the rule is found by
 * matching the request against the role's rules in order, as k8s.io/kubernetes/pkg/apis/rbac/v1's
 * evaluation helpers match them (ruleAllows).
 */
import { allows, type PolicyRule as CorePolicyRule, rulesToGrants } from '../../../../core/security/rbac-rules.ts';

/** A role's rule as the cluster holds it: the product's PolicyRule, and the URLs a non-resource rule names. */
export type PolicyRule = Partial<CorePolicyRule> & Pick<CorePolicyRule, 'verbs'> & { nonResourceURLs?: string[] };

export interface RoleRef {
  kind: 'ClusterRole' | 'Role';
  name: string;
  /** Roles only. */
  namespace?: string;
}

/** A role as it is in the cluster now. */
export interface RoleRules extends RoleRef {
  rules: PolicyRule[];
}

/** What RBAC matches of a resource request (kube's authorizer.Attributes); '' where the request has none. */
export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  /** '' when the request names no object (list, create by POST). */
  name: string;
}

/** A request as the audit log records it (dev/local/real-cluster/audit-log.ts AuditRecord has these). */
export interface AuditedRequest {
  verb: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  status: number;
  /** `authorization.k8s.io/decision`: allow or forbid. */
  decision?: string;
  /** `authorization.k8s.io/reason`, e.g. `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "g"`. */
  reason?: string;
}

/** A rule of a role with its use; `unusedPermissions` are the verb × resource pairs it grants that no request needed. */
export interface RuleReport {
  ruleIndex: number;
  rule: PolicyRule;
  allowed: number;
  permissions: string[];
  unusedPermissions: string[];
}

const ALL = '*';

/**
 * rbac's RuleAllows for a resource request, by the product's own matcher (core/security/rbac-rules.ts): `*`
 * for verbs, groups and resources, `resource/sub` and `*\/sub`, resourceNames. A non-resource rule allows
 * no resource request.
 */
export function ruleAllows(rule: PolicyRule, a: ResourceAttributes): boolean {
  if (!rule.apiGroups?.length || !rule.resources?.length) return false;
  const grants = rulesToGrants([rule], '', 'rule');
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  // A rule limited to names never matches a request that names no object (a list, a POST).
  return allows(grants, { namespace: '', apiGroup: a.group, resource, verb: a.verb, name: a.name || undefined });
}

const REASON = /^RBAC: allowed by (ClusterRoleBinding|RoleBinding) "([^"]*)" of (ClusterRole|Role) "([^"]*)" to /;

/**
 * The role an allowing reason names. A RoleBinding is spelled `"<name>/<namespace>"` there, and a Role is
 * the one of that namespace; a ClusterRole is the same whichever binding granted it.
 */
export function roleOfReason(reason: string | undefined): RoleRef | undefined {
  const m = REASON.exec(reason ?? '');
  if (!m) return undefined;
  const [, bindingKind, binding, kind, name] = m;
  if (kind === 'ClusterRole') return { kind, name };
  // Only a RoleBinding can grant a Role.
  if (bindingKind !== 'RoleBinding') return undefined;
  return { kind: 'Role', name, namespace: binding.slice(binding.lastIndexOf('/') + 1) };
}

/** `verb resource[.group][/subresource]`: `list pods`, `patch deployments.apps/scale`. */
function spell(verb: string, group: string, resource: string): string {
  const slash = resource.indexOf('/');
  const base = slash < 0 ? resource : resource.slice(0, slash);
  const sub = slash < 0 ? '' : resource.slice(slash);
  return `${verb} ${base}${group ? `.${group}` : ''}${sub}`;
}

export function permissionKey(a: ResourceAttributes): string {
  return spell(a.verb, a.group, a.subresource ? `${a.resource}/${a.subresource}` : a.resource);
}

/** The resource permissions a rule grants, spelled like permissionKey; wildcards stay `*` (never "unused"). */
export function grantedPermissions(rule: PolicyRule): string[] {
  return rule.verbs.flatMap((verb) =>
    (rule.apiGroups ?? []).flatMap((group) => (rule.resources ?? []).map((resource) => spell(verb, group, resource))),
  );
}

const roleKey = (r: RoleRef) => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

function attributes(r: AuditedRequest, verb = r.verb): ResourceAttributes {
  return {
    verb,
    group: r.group ?? '',
    resource: r.resource ?? '',
    subresource: r.subresource ?? '',
    name: r.name ?? '',
  };
}

/** Whether a role's rules apply to a request in `namespace` at all (a Role only in its own). */
const appliesIn = (role: RoleRef, namespace: string | undefined) =>
  role.kind === 'ClusterRole' || role.namespace === namespace;

/**
 * Every rule of every given role with the requests it allowed. A request counts for the first rule, in the
 * role its reason names, that allows it. A server-side apply that created its object (a patch answered 201)
 * was authorized as a `create` as well, by kube-apiserver's patch handler, which writes no annotation for
 * it: that use goes to the first rule allowing the create, in the named role first, then in the other roles
 * in the order given. Requests allowed by other roles (discovery by system:discovery) count for none.
 */
export function ruleUsage(roles: RoleRules[], requests: AuditedRequest[]): Map<string, RuleReport[]> {
  const used = new Map<string, { allowed: number; permissions: Set<string> }>();
  const count = (role: RoleRules, a: ResourceAttributes): boolean => {
    const index = role.rules.findIndex((rule) => ruleAllows(rule, a));
    if (index < 0) return false;
    const key = `${roleKey(role)}#${index}`;
    const entry = used.get(key) ?? { allowed: 0, permissions: new Set<string>() };
    entry.allowed++;
    entry.permissions.add(permissionKey(a));
    used.set(key, entry);
    return true;
  };
  for (const r of requests) {
    if (r.decision !== 'allow' || r.resource === undefined) continue;
    const named = roleOfReason(r.reason);
    const role = named && roles.find((x) => roleKey(x) === roleKey(named));
    if (!role) continue;
    count(role, attributes(r));
    if (r.verb === 'patch' && r.status === 201) {
      const create = attributes(r, 'create');
      for (const candidate of [role, ...roles.filter((x) => x !== role && appliesIn(x, r.namespace))])
        if (count(candidate, create)) break;
    }
  }
  return new Map(
    roles.map((role) => [
      roleKey(role),
      role.rules.map((rule, ruleIndex) => {
        const entry = used.get(`${roleKey(role)}#${ruleIndex}`);
        const permissions = [...(entry?.permissions ?? [])].sort();
        return {
          ruleIndex,
          rule,
          allowed: entry?.allowed ?? 0,
          permissions,
          unusedPermissions: grantedPermissions(rule).filter((p) => !p.includes(ALL) && !permissions.includes(p)),
        };
      }),
    ]),
  );
}

export function reportOf(usage: Map<string, RuleReport[]>, role: RoleRef): RuleReport[] {
  return usage.get(roleKey(role)) ?? [];
}
