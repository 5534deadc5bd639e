/**
 * RBAC as data: flattens Roles, ClusterRoles and their bindings into single grants (scope, group, resource,
 * verb, name) so two descriptions of access compare exactly, whatever way their rules are grouped, and
 * answers "is this request allowed" the way the RBAC authorizer does (no aggregation, no wildcards
 * expanded: a `*` is matched literally as "any", which is why the product's own roles never use one).
 */
import type { KubeObject } from '../kube.ts';

export type Verb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'deletecollection'
  | 'bind'
  | 'escalate'
  | 'impersonate';

/** One permission: `namespace` '' means cluster-wide (a ClusterRole bound by a ClusterRoleBinding). */
export interface Grant {
  namespace: string;
  apiGroup: string;
  /** Resource, with `/subresource` when it is one (e.g. `poolspirits/status`). */
  resource: string;
  verb: string;
  /** '' means any name. */
  resourceName: string;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  namespace?: string;
}

export interface RequestAttributes {
  /** '' for a cluster-scoped resource. */
  namespace: string;
  apiGroup: string;
  resource: string;
  verb: string;
  name?: string;
}

const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';

export function grantKey(g: Grant): string {
  return [g.namespace || '*cluster*', g.apiGroup || 'core', g.resource, g.verb, g.resourceName || '*'].join(' ');
}

/** Every grant of a list of rules at one scope. */
export function rulesToGrants(rules: unknown, namespace: string, where = 'rules'): Grant[] {
  if (!Array.isArray(rules)) throw new TypeError(`${where}: expected a list of policy rules`);
  const out: Grant[] = [];
  rules.forEach((rule: Partial<PolicyRule>, i) => {
    const at = `${where}[${i}]`;
    const list = (field: 'apiGroups' | 'resources' | 'verbs'): string[] => {
      const value = rule?.[field];
      if (!Array.isArray(value) || value.length === 0) throw new TypeError(`${at}.${field}: expected a non-empty list`);
      return value;
    };
    const [apiGroups, resources, verbs] = [list('apiGroups'), list('resources'), list('verbs')];
    const names = rule.resourceNames?.length ? rule.resourceNames : [''];
    for (const apiGroup of apiGroups)
      for (const resource of resources)
        for (const verb of verbs) {
          for (const resourceName of names) out.push({ namespace, apiGroup, resource, verb, resourceName });
        }
  });
  return out;
}

/**
 * What a subject may do according to these objects: the rules of every Role/ClusterRole that a binding
 * in the list grants to the subject, at the binding's scope. A binding whose role is not in the list is
 * an error (the manifests would bind nothing).
 */
export function grantsOf(objects: KubeObject[], subject: Subject): Grant[] {
  const rbac = objects.filter((o) => o.apiVersion === RBAC_API_VERSION);
  const roles = new Map(
    rbac
      .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
      .map((o) => [roleKey(o.kind, o.metadata.name, o.metadata.namespace), o]),
  );
  const out: Grant[] = [];
  for (const binding of rbac.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')) {
    const subjects = (binding.subjects as Subject[] | undefined) ?? [];
    if (!subjects.some((s) => sameSubject(s, subject, binding.metadata.namespace))) continue;
    const ref = binding.roleRef as { kind?: string; name?: string } | undefined;
    const where = `${binding.kind} ${binding.metadata.namespace ? `${binding.metadata.namespace}/` : ''}${binding.metadata.name}`;
    if (!ref?.kind || !ref.name) throw new TypeError(`${where}.roleRef: expected kind and name`);
    const scope = binding.kind === 'RoleBinding' ? (binding.metadata.namespace ?? '') : '';
    if (binding.kind === 'RoleBinding' && !scope)
      throw new TypeError(`${where}.metadata.namespace: a RoleBinding needs a namespace`);
    const role = roles.get(roleKey(ref.kind, ref.name, ref.kind === 'Role' ? scope : undefined));
    if (!role) throw new TypeError(`${where}.roleRef: ${ref.kind} ${ref.name} is not among the objects`);
    out.push(...rulesToGrants(role.rules, scope, `${role.kind} ${role.metadata.name}.rules`));
  }
  return dedupe(out);
}

/** Grants in `actual` but not `expected` (extra) and the other way round (missing). */
export function compareGrants(actual: Grant[], expected: Grant[]): { missing: Grant[]; extra: Grant[] } {
  const a = new Map(actual.map((g) => [grantKey(g), g]));
  const e = new Map(expected.map((g) => [grantKey(g), g]));
  return {
    missing: [...e].filter(([k]) => !a.has(k)).map(([, g]) => g),
    extra: [...a].filter(([k]) => !e.has(k)).map(([, g]) => g),
  };
}

/** Whether the grants allow a request, as the RBAC authorizer decides it. */
export function allows(grants: Grant[], req: RequestAttributes): boolean {
  const slash = req.resource.indexOf('/');
  // RBAC's `*/<subresource>` names that subresource of every resource.
  const anyOfSubresource = slash < 0 ? undefined : `*${req.resource.slice(slash)}`;
  return grants.some(
    (g) =>
      (g.namespace === '' || g.namespace === req.namespace) &&
      (g.apiGroup === '*' || g.apiGroup === req.apiGroup) &&
      (g.resource === '*' || g.resource === req.resource || g.resource === anyOfSubresource) &&
      (g.verb === '*' || g.verb === req.verb) &&
      (g.resourceName === '' || g.resourceName === req.name),
  );
}

/**
 * Grants folded back into few rules per scope (resources sharing group, verbs and names in one rule), in a
 * stable order: what a generated or reviewed Role would hold.
 */
export function compactRules(grants: Grant[]): Map<string, PolicyRule[]> {
  const byScope = new Map<string, Grant[]>();
  for (const g of dedupe(grants)) byScope.set(g.namespace, [...(byScope.get(g.namespace) ?? []), g]);
  const out = new Map<string, PolicyRule[]>();
  for (const [scope, list] of [...byScope].sort(([a], [b]) => a.localeCompare(b))) {
    // resource (+group, +name) → verbs
    const perResource = new Map<
      string,
      { apiGroup: string; resource: string; resourceName: string; verbs: Set<string> }
    >();
    for (const g of list) {
      const key = `${g.apiGroup}|${g.resource}|${g.resourceName}`;
      const entry = perResource.get(key) ?? {
        apiGroup: g.apiGroup,
        resource: g.resource,
        resourceName: g.resourceName,
        verbs: new Set<string>(),
      };
      entry.verbs.add(g.verb);
      perResource.set(key, entry);
    }
    const rules = new Map<string, PolicyRule>();
    for (const e of perResource.values()) {
      const verbs = sortVerbs([...e.verbs]);
      const key = `${e.apiGroup}|${e.resourceName}|${verbs.join(',')}`;
      const rule = rules.get(key) ?? {
        apiGroups: [e.apiGroup],
        resources: [],
        verbs,
        ...(e.resourceName ? { resourceNames: [e.resourceName] } : {}),
      };
      rule.resources.push(e.resource);
      rules.set(key, rule);
    }
    out.set(
      scope,
      [...rules.values()]
        .map((r) => ({ ...r, resources: r.resources.sort() }))
        .sort((a, b) => `${a.apiGroups[0]}|${a.resources[0]}`.localeCompare(`${b.apiGroups[0]}|${b.resources[0]}`)),
    );
  }
  return out;
}

const VERB_ORDER = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'bind',
  'escalate',
  'impersonate',
];

export function sortVerbs(verbs: string[]): string[] {
  return [...new Set(verbs)].sort((a, b) => VERB_ORDER.indexOf(a) - VERB_ORDER.indexOf(b) || a.localeCompare(b));
}

export function dedupe(grants: Grant[]): Grant[] {
  return [...new Map(grants.map((g) => [grantKey(g), g])).values()];
}

function roleKey(kind: string, name: string, namespace: string | undefined): string {
  return `${kind}/${kind === 'Role' ? (namespace ?? '') : ''}/${name}`;
}

function sameSubject(s: Subject, want: Subject, bindingNamespace: string | undefined): boolean {
  if (s.kind !== want.kind || s.name !== want.name) return false;
  // A ServiceAccount subject without a namespace means the binding's own namespace.
  return s.kind !== 'ServiceAccount' || (s.namespace ?? bindingNamespace) === want.namespace;
}
