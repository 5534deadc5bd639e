/**
 * What each function does to a cluster's apiserver, as (group, resource, verbs, scope), and from it the
 * exact RBAC the functions' identity needs — the table infra/cluster/reconciler/rbac.yaml is checked
 * against (test/infra/reconciler-rbac.test.ts), rule for rule, in both directions.
 *
 * Derived from code where the code decides: the kinds the reconcile reads and applies, and the kinds the
 * audit lists, are whatever renderPoolSpirit emits (pass its objects in); the rights the reconciler must
 * hold to grant them to each pool's agent are the rules of the rendered agent Role and ClusterRole. The
 * rest (the calls functions/* make by hand) is listed once below, next to the function that makes it.
 *
 * Why the reconciler holds the agent's rights instead of `escalate`/`bind`: Kubernetes lets a client create
 * or update a Role/ClusterRole only with rules it holds itself, and bind a role only if it holds the role's
 * rules — unless it has `escalate` (roles) / `bind` (bindings). Those verbs can only be narrowed by
 * resourceNames, and the agent's role names are per pool (`ps-<pool>-agent`, `poolspirit:agent:<pool>`), so
 * they would have to be granted for every name: with `escalate` + `bind` on clusterroles the reconciler could
 * write and bind a cluster-admin-equivalent role. Holding the agent's few rights (watch configmaps in the
 * product namespace; get/update poolspirits/status) costs three verbs and keeps the escalation check on.
 *
 * Server-side apply needs `create` as well as `patch` when the applied object does not exist yet (the
 * apiserver authorizes an apply that creates as a create), so every kind the reconcile applies gets both.
 */
import type { KubeObject } from '../kube.ts';
import { GROUP as POOLSPIRIT_GROUP, PLURAL as POOLSPIRIT_PLURAL } from '../poolspirit/api.ts';
import { dedupe, rulesToGrants, sortVerbs, type Grant, type Verb } from './rbac-rules.ts';

export const FUNCTIONS = ['reconcile', 'audit', 'cloud-events', 'probe', 'rollout'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

/** Who needs a permission: a function, or the RBAC escalation check on what the reconcile grants. */
export type PermissionUser = FunctionName | 'escalation-check';

export interface ApiUse {
  by: PermissionUser;
  apiGroup: string;
  /** Resource, `/subresource` included. */
  resource: string;
  verbs: Verb[];
  /** Namespace of the objects; '' for cluster-scoped resources. */
  namespace: string;
  /** Set when the code only ever touches these names. */
  resourceNames?: string[];
  /** The call that needs it (file and what it does). */
  why: string;
}

export interface PermissionInputs {
  /** Every object renderPoolSpirit emits for one pool (kinds and agent rules do not differ between pools). */
  rendered: KubeObject[];
  /** The product namespace (DEFAULT_NAMESPACE unless the functions are configured otherwise). */
  namespace: string;
  /** Where the reconcile and audit read the cluster CA (adapters/kubernetes CLUSTER_CA_CONFIGMAP). */
  clusterCa: { namespace: string; name: string };
  /** Where Events about cluster-scoped objects (the PoolSpirit) are created. */
  eventNamespace: string;
}

/** Kinds the functions touch, by `group/Kind`: resource name and whether it is namespaced. */
const KIND_RESOURCES: Record<string, { resource: string; namespaced: boolean }> = {
  '/ConfigMap': { resource: 'configmaps', namespaced: true },
  '/Event': { resource: 'events', namespaced: true },
  '/Node': { resource: 'nodes', namespaced: false },
  '/Pod': { resource: 'pods', namespaced: true },
  '/Secret': { resource: 'secrets', namespaced: true },
  '/Service': { resource: 'services', namespaced: true },
  '/ServiceAccount': { resource: 'serviceaccounts', namespaced: true },
  'apps/Deployment': { resource: 'deployments', namespaced: true },
  'rbac.authorization.k8s.io/Role': { resource: 'roles', namespaced: true },
  'rbac.authorization.k8s.io/RoleBinding': { resource: 'rolebindings', namespaced: true },
  'rbac.authorization.k8s.io/ClusterRole': { resource: 'clusterroles', namespaced: false },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { resource: 'clusterrolebindings', namespaced: false },
};

export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** The resource of a kind; unknown kinds fail loudly so a newly rendered kind cannot slip past RBAC. */
export function resourceOf(apiVersion: string, kind: string): { apiGroup: string; resource: string; namespaced: boolean } {
  const apiGroup = groupOf(apiVersion);
  const known = KIND_RESOURCES[`${apiGroup}/${kind}`];
  if (!known) throw new TypeError(`kind ${kind} (${apiVersion}) has no resource mapping in core/security/reconciler-permissions.ts: add it, then update infra/cluster RBAC`);
  return { apiGroup, ...known };
}

/** The distinct kinds among rendered objects, with their scope in the cluster. */
export function renderedKinds(rendered: KubeObject[]): Array<{ apiVersion: string; kind: string; apiGroup: string; resource: string; namespace: string }> {
  const seen = new Map<string, { apiVersion: string; kind: string; apiGroup: string; resource: string; namespace: string }>();
  for (const obj of rendered) {
    const r = resourceOf(obj.apiVersion, obj.kind);
    if (r.namespaced && !obj.metadata.namespace) throw new TypeError(`${obj.kind} ${obj.metadata.name}: metadata.namespace: expected the product namespace`);
    const namespace = r.namespaced ? obj.metadata.namespace! : '';
    seen.set(`${r.apiGroup}/${obj.kind}/${namespace}`, { apiVersion: obj.apiVersion, kind: obj.kind, apiGroup: r.apiGroup, resource: r.resource, namespace });
  }
  return [...seen.values()];
}

const NODEPOOL_GROUP = 'apps.openyurt.io';

/** Every API use of every function, with the reason. */
export function functionApiUses(inputs: PermissionInputs): ApiUse[] {
  const { namespace: ns, clusterCa, eventNamespace } = inputs;
  const kinds = renderedKinds(inputs.rendered);
  const poolspirits = { apiGroup: POOLSPIRIT_GROUP, resource: POOLSPIRIT_PLURAL, namespace: '' };
  const nodepools = { apiGroup: NODEPOOL_GROUP, resource: 'nodepools', namespace: '' };
  const nodes = { apiGroup: '', resource: 'nodes', namespace: '' };
  const pods = { apiGroup: '', resource: 'pods', namespace: ns };
  const clusterCaRead = {
    apiGroup: '', resource: 'configmaps', namespace: clusterCa.namespace, resourceNames: [clusterCa.name], verbs: ['get'] as Verb[],
  };
  const uses: ApiUse[] = [
    // functions/reconcile/converge.ts
    { by: 'reconcile', ...nodepools, verbs: ['get'], why: 'getNodePool: the pool being reconciled' },
    { by: 'reconcile', ...poolspirits, verbs: ['get'], why: 'getPoolSpirit' },
    { by: 'reconcile', ...poolspirits, verbs: ['create', 'patch'], why: 'server-side apply of a new PoolSpirit from fleet defaults' },
    { by: 'reconcile', ...poolspirits, verbs: ['delete'], why: 'delete the PoolSpirit it created when the pool stops being edge / opts out' },
    { by: 'reconcile', ...poolspirits, resource: `${POOLSPIRIT_PLURAL}/status`, verbs: ['patch'], why: 'patchStatus: server-side apply of the status' },
    { by: 'reconcile', ...clusterCaRead, why: 'readClusterCA: the CA YurtHub client certificates chain to' },
    { by: 'reconcile', apiGroup: '', resource: 'events', namespace: eventNamespace, verbs: ['create'], why: 'createEvent about the (cluster-scoped) PoolSpirit' },
    ...kinds.map((k): ApiUse => ({
      by: 'reconcile', apiGroup: k.apiGroup, resource: k.resource, namespace: k.namespace, verbs: ['get', 'create', 'patch'],
      why: `read the live ${k.kind}, server-side apply the rendered one (creating it the first time)`,
    })),
    // functions/audit/observe.ts
    { by: 'audit', ...nodepools, verbs: ['list'], why: 'listNodePools' },
    { by: 'audit', ...poolspirits, verbs: ['list'], why: 'list PoolSpirits' },
    { by: 'audit', ...pods, verbs: ['list'], why: 'list pool-spirit pods (label selector)' },
    { by: 'audit', ...nodes, verbs: ['list'], why: 'list Nodes (pool membership, readiness)' },
    { by: 'audit', ...clusterCaRead, why: 'readClusterCA: render the desired objects to compare' },
    ...kinds.map((k): ApiUse => ({
      by: 'audit', apiGroup: k.apiGroup, resource: k.resource, namespace: k.namespace, verbs: ['list'], why: `OWNED_KINDS: list managed ${k.kind} objects (drift, orphans)`,
    })),
    // functions/cloud-events/move.ts
    { by: 'cloud-events', ...nodes, verbs: ['list'], why: 'find the Node of the leaving instance' },
    { by: 'cloud-events', ...nodes, verbs: ['patch'], why: 'cordon it (server-side apply of spec.unschedulable)' },
    { by: 'cloud-events', ...pods, verbs: ['list'], why: 'pool-spirit pods on that Node' },
    { by: 'cloud-events', ...pods, verbs: ['delete'], why: 'delete the pod so its Deployment reschedules it in the pool' },
    { by: 'cloud-events', ...poolspirits, verbs: ['list'], why: 'map pods to pools' },
    // functions/probe/run.ts
    { by: 'probe', ...poolspirits, verbs: ['list'], why: 'read every status.leader' },
    // functions/rollout/cluster-ops.ts
    { by: 'rollout', ...poolspirits, verbs: ['list'], why: 'listPoolSpirits' },
    { by: 'rollout', ...poolspirits, verbs: ['patch'], why: 'applySpecFields: server-side apply of version fields' },
  ];
  return [...uses, ...escalationUses(inputs.rendered)];
}

/** The agent's rights, which the reconcile grants and so must hold (for every pool, hence without names). */
function escalationUses(rendered: KubeObject[]): ApiUse[] {
  const out: ApiUse[] = [];
  for (const role of rendered.filter((o) => o.apiVersion === 'rbac.authorization.k8s.io/v1' && (o.kind === 'Role' || o.kind === 'ClusterRole'))) {
    const namespace = role.kind === 'Role' ? role.metadata.namespace ?? '' : '';
    for (const g of rulesToGrants(role.rules, namespace, `${role.kind} ${role.metadata.name}.rules`)) {
      out.push({
        by: 'escalation-check', apiGroup: g.apiGroup, resource: g.resource, namespace, verbs: [g.verb as Verb],
        why: `granted to each pool's agent by the rendered ${role.kind}`,
      });
    }
  }
  return out;
}

/** The uses as single grants (what a Role must contain). */
export function usesToGrants(uses: ApiUse[]): Grant[] {
  const out: Grant[] = [];
  for (const u of uses) for (const verb of u.verbs) for (const resourceName of u.resourceNames ?? ['']) {
    out.push({ namespace: u.namespace, apiGroup: u.apiGroup, resource: u.resource, verb, resourceName });
  }
  return dedupe(out);
}

/** The union over all functions: the exact access of the functions' identity (`pool-spirit:reconciler`). */
export function reconcilerGrants(inputs: PermissionInputs): Grant[] {
  return usesToGrants(functionApiUses(inputs));
}

/** A table (markdown) of who uses what: for docs and review. */
export function permissionTable(uses: ApiUse[]): string {
  const rows = new Map<string, { scope: string; group: string; resource: string; verbs: Map<string, Set<string>> }>();
  for (const u of uses) {
    const scope = u.namespace ? `${u.namespace}${u.resourceNames ? ` (${u.resourceNames.join(', ')})` : ''}` : 'cluster';
    const key = `${scope}|${u.apiGroup}|${u.resource}`;
    const row = rows.get(key) ?? { scope, group: u.apiGroup || 'core', resource: u.resource, verbs: new Map() };
    for (const v of u.verbs) row.verbs.set(v, new Set([...(row.verbs.get(v) ?? []), u.by]));
    rows.set(key, row);
  }
  const lines = ['| scope | group | resource | verb: used by |', '|---|---|---|---|'];
  for (const r of [...rows.values()].sort((a, b) => `${a.scope}${a.group}${a.resource}`.localeCompare(`${b.scope}${b.group}${b.resource}`))) {
    const verbs = sortVerbs([...r.verbs.keys()]).map((v) => `${v}: ${[...r.verbs.get(v)!].join(', ')}`).join('; ');
    lines.push(`| ${r.scope} | ${r.group} | ${r.resource} | ${verbs} |`);
  }
  return lines.join('\n');
}
