/**
 * RBAC escalation prevention, as kube-apiserver's RBAC storage does it (k8s.io/kubernetes
 * pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go,
 * pkg/registry/rbac/escalation_check.go, pkg/registry/rbac/validation/rule.go):
 * - Role / ClusterRole create or update: system:masters; or `escalate` on the role (the request's name and
 *   namespace); or every rule is covered by the rules the writer holds (for a Role: its ClusterRoleBindings
 *   plus the RoleBindings of the Role's namespace; for a ClusterRole: cluster-wide only). A ClusterRole that
 *   has (or had) an aggregationRule also needs `*` on everything (`must have cluster-admin privileges`).
 * - RoleBinding / ClusterRoleBinding create or update: system:masters; or `bind` on the referenced role
 *   (in the binding's namespace); or the writer's rules there cover the referenced role's rules. A role
 *   that cannot be resolved fails the write with the lookup's error (404), as kube's registry does.
 * - An update that changes nothing but ownerReferences, finalizers, selfLink or managedFields is not
 *   checked (IsOnlyMutatingGCFields), so the garbage collector's writes go through.
 */
import { isDeepStrictEqual } from 'node:util';
import { type ApiError, badRequest, internalError, notFound } from '../server/errors.ts';
import type { ApiObject, ObjectMeta } from '../server/objects.ts';
import { forbiddenWrite, notHeldMessage } from './escalation-message.ts';
import { RBAC_GROUP, type RbacSnapshot } from './rbac-policy.ts';
import { subjectMatches } from './rbac-rules.ts';
import { type AtomicRule, covers } from './rule-covers.ts';
import {
  type AggregationRule,
  type Decision,
  MASTERS_GROUP,
  type PolicyRule,
  type RequestAttributes,
  type RoleRef,
  type RuleRef,
  type UserInfo,
} from './types.ts';
import { permissionKey } from './usage.ts';

export const ROLE_RESOURCES = new Set(['roles', 'clusterroles']);
export const BINDING_RESOURCES = new Set(['rolebindings', 'clusterrolebindings']);

/** kube's fullAuthority: what setting or changing an aggregationRule requires. */
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

export interface RbacWrite {
  user: UserInfo;
  /** The request's attributes (a resource request on one of the four RBAC resources). */
  request: Extract<RequestAttributes, { resourceRequest: true }>;
  /** The object to store (before defaulting), and the stored one for an update. */
  obj: ApiObject;
  old: ApiObject | undefined;
  policy: RbacSnapshot;
  authorize(user: UserInfo, attributes: RequestAttributes): Promise<Decision>;
}

/** An owner rule that covered a permission to grant, spelled as the usage recorder spells permissions. */
export interface CoveredPermission {
  by: RuleRef;
  permission: string;
}

export type EscalationOutcome =
  | { allowed: true; reason: 'masters' | 'gc-fields-only' }
  /** `escalate` or `bind` was authorized: the decision and the attributes it was asked for. */
  | {
      allowed: true;
      reason: 'authorized';
      decision: Extract<Decision, { allowed: true }>;
      attributes: RequestAttributes;
    }
  | { allowed: true; reason: 'covered'; covered: CoveredPermission[] }
  | { allowed: false; error: ApiError };

export function isRbacWrite(a: RequestAttributes): a is RbacWrite['request'] {
  return (
    a.resourceRequest &&
    a.apiGroup === RBAC_GROUP &&
    (ROLE_RESOURCES.has(a.resource) || BINDING_RESOURCES.has(a.resource)) &&
    !a.subresource
  );
}

export async function checkRbacWrite(w: RbacWrite): Promise<EscalationOutcome> {
  if (w.user.groups.includes(MASTERS_GROUP)) return { allowed: true, reason: 'masters' };
  return ROLE_RESOURCES.has(w.request.resource) ? checkRoleWrite(w) : checkBindingWrite(w);
}

async function checkRoleWrite(w: RbacWrite): Promise<EscalationOutcome> {
  const { request } = w;
  // RoleEscalationAuthorized: the request's own name (empty for a POST) and namespace.
  const escalate: RequestAttributes = { ...request, verb: 'escalate', apiVersion: '*', subresource: '' };
  const decision = await w.authorize(w.user, escalate);
  if (decision.allowed) return { allowed: true, reason: 'authorized', decision, attributes: escalate };
  if (w.old && isOnlyMutatingGcFields(w.obj, w.old)) return { allowed: true, reason: 'gc-fields-only' };

  const gr = { group: RBAC_GROUP, resource: request.resource };
  const name = String(w.obj.metadata?.name ?? '');
  const owner = rulesFor(w.policy, w.user, request.namespace);
  const rules = coverage(owner, (w.obj.rules ?? []) as PolicyRule[]);
  if (rules.missing.length)
    return { allowed: false, error: forbiddenWrite(gr, name, notHeldMessage(w.user, rules.missing, owner.errors)) };
  let covered = rules.covered;
  if (request.resource === 'clusterroles' && (hasAggregationRule(w.obj) || (w.old && hasAggregationRule(w.old)))) {
    const full = coverage(owner, FULL_AUTHORITY);
    if (full.missing.length)
      return {
        allowed: false,
        error: forbiddenWrite(gr, name, 'must have cluster-admin privileges to use the aggregationRule'),
      };
    covered = [...covered, ...full.covered];
  }
  return { allowed: true, reason: 'covered', covered };
}

async function checkBindingWrite(w: RbacWrite): Promise<EscalationOutcome> {
  const { request } = w;
  if (w.old && isOnlyMutatingGcFields(w.obj, w.old)) return { allowed: true, reason: 'gc-fields-only' };
  const namespace = request.namespace;
  const roleRef = (w.obj.roleRef ?? {}) as Partial<RoleRef>;
  const bind = bindAttributes(roleRef, namespace);
  if (bind) {
    const decision = await w.authorize(w.user, bind);
    if (decision.allowed) return { allowed: true, reason: 'authorized', decision, attributes: bind };
  }
  const referenced = roleReferenceRules(w.policy, roleRef, namespace);
  if ('error' in referenced) return { allowed: false, error: referenced.error };
  const owner = rulesFor(w.policy, w.user, namespace);
  const result = coverage(owner, referenced.rules);
  if (result.missing.length) {
    const gr = { group: RBAC_GROUP, resource: request.resource };
    return {
      allowed: false,
      error: forbiddenWrite(
        gr,
        String(w.obj.metadata?.name ?? ''),
        notHeldMessage(w.user, result.missing, owner.errors),
      ),
    };
  }
  return { allowed: true, reason: 'covered', covered: result.covered };
}

/** BindingAuthorized: `bind` on the referenced role, in the binding's namespace, with the roleRef's group as given. */
function bindAttributes(roleRef: Partial<RoleRef>, namespace: string): RequestAttributes | undefined {
  const resource = roleRef.kind === 'ClusterRole' ? 'clusterroles' : roleRef.kind === 'Role' ? 'roles' : undefined;
  if (!resource) return undefined;
  return {
    resourceRequest: true,
    verb: 'bind',
    apiGroup: roleRef.apiGroup ?? '',
    apiVersion: '',
    namespace,
    resource,
    subresource: '',
    name: roleRef.name ?? '',
  };
}

interface OwnerRules {
  rules: Array<{ rule: PolicyRule; by: RuleRef }>;
  /** Bindings whose role could not be resolved, worded as kube's registry-backed rule resolver words them. */
  errors: string[];
}

/**
 * kube's DefaultRuleResolver.RulesFor: the rules of every ClusterRoleBinding that applies to the user, then
 * (for a namespace) of every RoleBinding there, in that order — the same order the authorizer visits.
 */
export function rulesFor(policy: RbacSnapshot, user: UserInfo, namespace: string): OwnerRules {
  const out: OwnerRules = { rules: [], errors: [] };
  const bindings = [...policy.clusterRoleBindings, ...(namespace ? (policy.roleBindings.get(namespace) ?? []) : [])];
  for (const binding of bindings) {
    if (!binding.subjects.some((s) => subjectMatches(user, s, binding.namespace))) continue;
    const resolved = roleReferenceRules(policy, binding.roleRef, binding.namespace);
    if ('error' in resolved) {
      out.errors.push(resolved.error.message);
      continue;
    }
    resolved.rules.forEach((rule, ruleIndex) => {
      out.rules.push({ rule, by: { ...resolved.ref, ruleIndex } });
    });
  }
  return out;
}

/**
 * GetRoleReferenceRules through the registry: a Role in the binding's namespace (a ClusterRoleBinding has
 * none, which the registry refuses as a bad request), or a ClusterRole; the errors are the registry's.
 */
function roleReferenceRules(
  policy: RbacSnapshot,
  roleRef: Partial<RoleRef>,
  namespace: string,
): { rules: PolicyRule[]; ref: Omit<RuleRef, 'ruleIndex'> } | { error: ApiError } {
  const name = roleRef.name ?? '';
  if (roleRef.kind === 'Role') {
    if (!namespace) return { error: badRequest('Namespace parameter required.') };
    const rules = policy.roleRules(namespace, name);
    return rules
      ? { rules, ref: { kind: 'Role', namespace, name } }
      : { error: notFound({ group: RBAC_GROUP, resource: 'roles' }, name) };
  }
  if (roleRef.kind === 'ClusterRole') {
    const rules = policy.clusterRoleRules(name);
    return rules
      ? { rules, ref: { kind: 'ClusterRole', name } }
      : { error: notFound({ group: RBAC_GROUP, resource: 'clusterroles' }, name) };
  }
  return { error: internalError(new Error(`unsupported role reference kind: ${JSON.stringify(roleRef.kind ?? '')}`)) };
}

/** Covers, with the owner rule that covered each permission (the first, where kube stops looking). */
function coverage(owner: OwnerRules, rules: PolicyRule[]): { missing: AtomicRule[]; covered: CoveredPermission[] } {
  const result = covers(
    owner.rules.map((o) => o.rule),
    rules,
  );
  const covered = result.parts
    .filter((p) => p.owner >= 0)
    .map((p) => {
      const ownerRule = owner.rules[p.owner];
      if (!ownerRule) throw new Error(`covers: owner rule ${p.owner} of ${owner.rules.length} does not exist`);
      return { by: ownerRule.by, permission: atomicPermission(p.part) };
    });
  return { missing: result.missing, covered };
}

/** `verb resource[.group][/subresource]` or `verb /path`, as permissionKey spells a request. */
function atomicPermission(part: AtomicRule): string {
  if ('nonResourceURLs' in part)
    return permissionKey({ resourceRequest: false, verb: part.verbs[0], path: part.nonResourceURLs[0] });
  const [resource, subresource = ''] = splitOnce(part.resources[0]);
  return permissionKey({
    resourceRequest: true,
    verb: part.verbs[0],
    apiGroup: part.apiGroups[0],
    apiVersion: '',
    namespace: '',
    resource,
    subresource,
    name: '',
  });
}

function splitOnce(resource: string): [string, string?] {
  const slash = resource.indexOf('/');
  return slash < 0 ? [resource] : [resource.slice(0, slash), resource.slice(slash + 1)];
}

function hasAggregationRule(role: ApiObject): boolean {
  const selectors = (role.aggregationRule as AggregationRule | undefined)?.clusterRoleSelectors;
  return Array.isArray(selectors) && selectors.length > 0;
}

const GC_FIELDS = ['ownerReferences', 'finalizers', 'selfLink', 'managedFields'];

/**
 * kube's IsOnlyMutatingGCFields: equal to the stored object once the GC's fields are taken from it.
 * Semantic equality as apimachinery's: an empty list or map equals an absent one.
 */
export function isOnlyMutatingGcFields(obj: ApiObject, old: ApiObject): boolean {
  const copy = structuredClone(obj);
  copy.metadata ??= {} as ObjectMeta;
  const m = copy.metadata;
  for (const field of GC_FIELDS) {
    if (old.metadata?.[field] === undefined) delete m[field];
    else m[field] = old.metadata[field];
  }
  return isDeepStrictEqual(withoutEmpty(copy), withoutEmpty(old));
}

function withoutEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmpty);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const y = withoutEmpty(x);
    if (Array.isArray(y) ? y.length === 0 : y !== null && typeof y === 'object' && Object.keys(y).length === 0)
      continue;
    if (y !== undefined) out[k] = y;
  }
  return out;
}
