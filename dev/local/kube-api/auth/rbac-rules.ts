/** RBAC rule matching, as k8s.io/kubernetes/pkg/apis/rbac/v1 evaluation helpers define it. */
import type { PolicyRule, RequestAttributes, Subject, UserInfo } from './types.ts';

const ALL = '*';

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === ALL || v === verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === ALL || g === group);
}

/** `*`, the exact `resource/subresource`, or `*\/subresource` for any resource's subresource. */
function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return (rule.resources ?? []).some(
    (r) => r === ALL || r === combined || (subresource !== '' && r === `*/${subresource}`),
  );
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** `*`, an exact path, or a prefix rule ending in `*`. */
function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === ALL || u === path || (u.endsWith(ALL) && path.startsWith(u.slice(0, -1))),
  );
}

export function ruleAllows(a: RequestAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.resourceRequest) return nonResourceUrlMatches(rule, a.path);
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return (
    apiGroupMatches(rule, a.apiGroup) &&
    resourceMatches(rule, combined, a.subresource) &&
    resourceNameMatches(rule, a.name)
  );
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/**
 * rbac's appliesToUser. A ServiceAccount subject without a namespace means the binding's own namespace
 * (so it never matches from a ClusterRoleBinding).
 */
export function subjectMatches(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.name === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return ns !== '' && user.name === serviceAccountUsername(ns, subject.name);
    }
    default:
      return false;
  }
}
