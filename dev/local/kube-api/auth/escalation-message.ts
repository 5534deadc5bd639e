/**
 * The words of kube's escalation refusals, character for character (clients and tests match on them):
 * ConfirmNoEscalation's message (pkg/registry/rbac/validation/rule.go), CompactRules
 * (policy_compact.go), rbacv1helpers.CompactString, Go's %q of strings and string slices,
 * utilerrors.NewAggregate, and apierrors.NewForbidden.
 */
import { ApiError, type StatusDetails } from '../server/errors.ts';
import type { AtomicRule } from './rule-covers.ts';
import type { PolicyRule, UserInfo } from './types.ts';

/** Go's %q for a string. JSON quoting agrees with strconv.Quote for printable text, which is what names are. */
function q(s: string): string {
  return JSON.stringify(s);
}

/** Go's %q for a []string: `["a" "b"]`. */
function qList(list: string[]): string {
  return `[${list.map(q).join(' ')}]`;
}

/** rbacv1helpers.CompactString: only the fields that are set, in this order. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${qList(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${qList(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${qList(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${qList(rule.resourceNames)}`);
  if (rule.verbs?.length) parts.push(`Verbs:${qList(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/**
 * kube's CompactRules on the missing atomic rules: those of one group, resource and (optional) name merge
 * their verbs, in order and without removing repeats; URL rules stay as they are.
 */
export function compactRules(rules: AtomicRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    if ('nonResourceURLs' in rule) {
      out.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
      continue;
    }
    const key = JSON.stringify([rule.apiGroups[0], rule.resources[0], rule.resourceNames?.[0] ?? null]);
    const existing = simple.get(key);
    if (existing) existing.verbs.push(...rule.verbs);
    else
      simple.set(key, {
        apiGroups: [...rule.apiGroups],
        resources: [...rule.resources],
        ...(rule.resourceNames ? { resourceNames: [...rule.resourceNames] } : {}),
        verbs: [...rule.verbs],
      });
  }
  return [...out, ...simple.values()];
}

/** utilerrors.NewAggregate(...).Error(): one message as is, several (distinct) in brackets. */
function aggregate(messages: string[]): string {
  const distinct = [...new Set(messages)];
  const [only] = distinct;
  return distinct.length === 1 && only !== undefined ? only : `[${distinct.join(', ')}]`;
}

/** ConfirmNoEscalation's error: the missing rules compacted, described, deduplicated and sorted. */
export function notHeldMessage(user: UserInfo, missing: AtomicRule[], resolutionErrors: string[]): string {
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${q(user.name)} (groups=${qList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (resolutionErrors.length) msg += `; resolution errors: [${aggregate(resolutionErrors)}]`;
  return msg;
}

/** apierrors.NewForbidden(groupResource, name, err): the name part only when there is a name. */
export function forbiddenWrite(gr: { group: string; resource: string }, name: string, why: string): ApiError {
  const qualified = gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  return new ApiError(
    403,
    'Forbidden',
    `${name ? `${qualified} ${q(name)}` : qualified} is forbidden: ${why}`,
    details,
  );
}
