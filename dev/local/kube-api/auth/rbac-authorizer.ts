/**
 * kube's RBAC authorizer (plugin/pkg/auth/authorizer/rbac): ClusterRoleBindings first, then the
 * RoleBindings of the request's namespace; the first rule that allows the request wins. Bindings whose
 * role is missing deny, and the missing roles are named in the reason, as kube does.
 */
import type { Binding, RbacSnapshot } from './rbac-policy.ts';
import { ruleAllows, subjectMatches } from './rbac-rules.ts';
import type { Decision, PolicyRule, RequestAttributes, RuleRef, UserInfo } from './types.ts';

interface ResolvedRole {
  ref: Omit<RuleRef, 'ruleIndex'>;
  rules: PolicyRule[] | undefined;
}

function resolveRole(policy: RbacSnapshot, binding: Binding): ResolvedRole {
  const { kind, name } = binding.roleRef;
  if (kind === 'Role' && binding.kind === 'RoleBinding') {
    return {
      ref: { kind: 'Role', namespace: binding.namespace, name },
      rules: policy.roleRules(binding.namespace, name),
    };
  }
  if (kind === 'ClusterRole') return { ref: { kind: 'ClusterRole', name }, rules: policy.clusterRoleRules(name) };
  return { ref: { kind: 'ClusterRole', name }, rules: undefined };
}

function missingRole(r: ResolvedRole): string {
  return r.ref.kind === 'Role'
    ? `role.rbac.authorization.k8s.io "${r.ref.name}" not found`
    : `clusterrole.rbac.authorization.k8s.io "${r.ref.name}" not found`;
}

export function authorizeRbac(policy: RbacSnapshot, user: UserInfo, a: RequestAttributes): Decision {
  const errors: string[] = [];
  const bindings = [
    ...policy.clusterRoleBindings,
    ...(a.resourceRequest && a.namespace ? (policy.roleBindings.get(a.namespace) ?? []) : []),
  ];
  for (const binding of bindings) {
    if (!binding.subjects.some((s) => subjectMatches(user, s, binding.namespace))) continue;
    const role = resolveRole(policy, binding);
    if (!role.rules) {
      errors.push(missingRole(role));
      continue;
    }
    const ruleIndex = role.rules.findIndex((rule) => ruleAllows(a, rule));
    if (ruleIndex >= 0) {
      const bindingName =
        binding.kind === 'RoleBinding'
          ? `RoleBinding ${binding.namespace}/${binding.name}`
          : `ClusterRoleBinding ${binding.name}`;
      return { allowed: true, by: { ...role.ref, ruleIndex }, binding: bindingName };
    }
  }
  return {
    allowed: false,
    reason: errors.length ? `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}` : '',
  };
}
