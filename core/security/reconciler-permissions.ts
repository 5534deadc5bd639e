/**
 * What each function does to a cluster's apiserver, as (group, resource, verbs, scope), and from it the
 * exact RBAC the functions' identity needs — the table infra/cluster/reconciler/rbac.yaml is checked
 * against (test/infra/cluster/reconciler/reconciler-rbac.test.ts), rule for rule, in both directions.
 *
 * Derived from code where the code decides: the kinds the reconcile reads and applies, and the kinds the
 * audit lists, are whatever renderPoolSpirit emits (pass its objects in). The rest (the calls functions/*
 * make by hand) is listed once below, next to the function that makes it.
 *
 * No RBAC kind: renderPoolSpirit emits no Role, RoleBinding, ClusterRole or ClusterRoleBinding (the agents'
 * rights are static, core/security/agent-permissions.ts), and resourceOf refuses those kinds, so a renderer
 * that starts emitting one fails here instead of quietly widening this identity. An identity that may
 * create or patch RBAC objects without resourceNames can weaken any role (cluster-admin included), bind
 * any role it holds to anyone and hand any right it holds to anyone: Kubernetes' escalation check allows
 * all three (docs/security.md).
 *
 * Server-side apply needs `create` as well as `patch` when the applied object does not exist yet (the
 * apiserver authorizes an apply that creates as a create), so every kind the reconcile applies gets both.
 */
import type { KubeObject } from '../kube.ts';
import { NODEPOOL_GROUP } from '../nodepool-versions.ts';
import { GROUP as POOLSPIRIT_GROUP, PLURAL as POOLSPIRIT_PLURAL } from '../poolspirit/names.ts';
import { dedupe, type Grant, sortVerbs, type Verb } from './rbac-rules.ts';

export const FUNCTIONS = ['reconcile', 'audit', 'cloud-events', 'probe', 'rollout'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

/** Who needs a permission: a function. */
export type PermissionUser = FunctionName;

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
};

/** RBAC kinds are never rendered: rendering one is a design change (docs/decisions/0001-no-runtime-rbac-writes.md). */
const RBAC_GROUP = 'rbac.authorization.k8s.io';

export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** The resource of a kind; unknown kinds fail loudly so a newly rendered kind cannot slip past RBAC. */
export function resourceOf(
  apiVersion: string,
  kind: string,
): { apiGroup: string; resource: string; namespaced: boolean } {
  const apiGroup = groupOf(apiVersion);
  if (apiGroup === RBAC_GROUP) {
    throw new TypeError(
      `kind ${kind} (${apiVersion}): the reconciler writes no RBAC objects at run time; static rights go in infra/cluster (docs/decisions/0001-no-runtime-rbac-writes.md)`,
    );
  }
  const known = KIND_RESOURCES[`${apiGroup}/${kind}`];
  if (!known)
    throw new TypeError(
      `kind ${kind} (${apiVersion}) has no resource mapping in core/security/reconciler-permissions.ts: add it, then update infra/cluster RBAC`,
    );
  return { apiGroup, ...known };
}

/** The distinct kinds among rendered objects, with their scope in the cluster. */
export function renderedKinds(
  rendered: KubeObject[],
): Array<{ apiVersion: string; kind: string; apiGroup: string; resource: string; namespace: string }> {
  const seen = new Map<
    string,
    { apiVersion: string; kind: string; apiGroup: string; resource: string; namespace: string }
  >();
  for (const obj of rendered) {
    const r = resourceOf(obj.apiVersion, obj.kind);
    const namespace = r.namespaced ? (obj.metadata.namespace ?? '') : '';
    if (r.namespaced && !namespace)
      throw new TypeError(`${obj.kind} ${obj.metadata.name}: metadata.namespace: expected the product namespace`);
    seen.set(`${r.apiGroup}/${obj.kind}/${namespace}`, {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      apiGroup: r.apiGroup,
      resource: r.resource,
      namespace,
    });
  }
  return [...seen.values()];
}

/** Every API use of every function, with the reason. */
export function functionApiUses(inputs: PermissionInputs): ApiUse[] {
  const { namespace: ns, clusterCa, eventNamespace } = inputs;
  const kinds = renderedKinds(inputs.rendered);
  const poolspirits = { apiGroup: POOLSPIRIT_GROUP, resource: POOLSPIRIT_PLURAL, namespace: '' };
  const nodepools = { apiGroup: NODEPOOL_GROUP, resource: 'nodepools', namespace: '' };
  const nodes = { apiGroup: '', resource: 'nodes', namespace: '' };
  const pods = { apiGroup: '', resource: 'pods', namespace: ns };
  const clusterCaRead = {
    apiGroup: '',
    resource: 'configmaps',
    namespace: clusterCa.namespace,
    resourceNames: [clusterCa.name],
    verbs: ['get'] as Verb[],
  };
  const uses: ApiUse[] = [
    // functions/reconcile/converge.ts
    { by: 'reconcile', ...nodepools, verbs: ['get'], why: 'getNodePool: the pool being reconciled' },
    {
      by: 'reconcile',
      ...nodepools,
      verbs: ['list'],
      why: 'functions/yurt-coordinator/cluster-objects.ts: the yurt-coordinator compat pools (label selector), only where compat is used',
    },
    { by: 'reconcile', ...poolspirits, verbs: ['get'], why: 'getPoolSpirit' },
    {
      by: 'reconcile',
      ...poolspirits,
      verbs: ['create', 'patch'],
      why: 'server-side apply of a new PoolSpirit from fleet defaults',
    },
    {
      by: 'reconcile',
      ...poolspirits,
      verbs: ['delete'],
      why: 'delete the PoolSpirit it created when the pool stops being edge / opts out',
    },
    {
      by: 'reconcile',
      ...poolspirits,
      resource: `${POOLSPIRIT_PLURAL}/status`,
      verbs: ['patch'],
      why: 'patchStatus: server-side apply of the status',
    },
    { by: 'reconcile', ...clusterCaRead, why: 'readClusterCA: the CA YurtHub client certificates chain to' },
    {
      by: 'reconcile',
      apiGroup: '',
      resource: 'events',
      namespace: eventNamespace,
      verbs: ['create'],
      why: 'createEvent about the (cluster-scoped) PoolSpirit',
    },
    {
      by: 'reconcile',
      ...pods,
      verbs: ['list'],
      why: 'podProblemOf: why the pool-spirit pod is not ready (only while it is not)',
    },
    ...kinds.map(
      (k): ApiUse => ({
        by: 'reconcile',
        apiGroup: k.apiGroup,
        resource: k.resource,
        namespace: k.namespace,
        verbs: ['get', 'create', 'patch'],
        why: `read the live ${k.kind}, server-side apply the rendered one (creating it the first time)`,
      }),
    ),
    // functions/audit/observe.ts
    { by: 'audit', ...nodepools, verbs: ['list'], why: 'listNodePools' },
    { by: 'audit', ...poolspirits, verbs: ['list'], why: 'list PoolSpirits' },
    { by: 'audit', ...pods, verbs: ['list'], why: 'list pool-spirit pods (label selector)' },
    { by: 'audit', ...nodes, verbs: ['list'], why: 'list Nodes (pool membership, readiness)' },
    { by: 'audit', ...clusterCaRead, why: 'readClusterCA: render the desired objects to compare' },
    ...kinds.map(
      (k): ApiUse => ({
        by: 'audit',
        apiGroup: k.apiGroup,
        resource: k.resource,
        namespace: k.namespace,
        verbs: ['list'],
        why: `OWNED_KINDS: list managed ${k.kind} objects (drift, orphans)`,
      }),
    ),
    // functions/cloud-events/move.ts
    { by: 'cloud-events', ...nodes, verbs: ['list'], why: 'find the Node of the leaving instance' },
    { by: 'cloud-events', ...nodes, verbs: ['patch'], why: 'cordon it (server-side apply of spec.unschedulable)' },
    { by: 'cloud-events', ...pods, verbs: ['list'], why: 'pool-spirit pods on that Node' },
    {
      by: 'cloud-events',
      ...pods,
      verbs: ['delete'],
      why: 'delete the pod so its Deployment reschedules it in the pool',
    },
    { by: 'cloud-events', ...poolspirits, verbs: ['list'], why: 'map pods to pools' },
    // functions/probe/run.ts
    { by: 'probe', ...poolspirits, verbs: ['list'], why: 'read every status.leader' },
    // functions/rollout/cluster-ops.ts
    { by: 'rollout', ...poolspirits, verbs: ['list'], why: 'listPoolSpirits' },
    { by: 'rollout', ...poolspirits, verbs: ['patch'], why: 'applySpecFields: server-side apply of version fields' },
  ];
  return uses;
}

/** The uses as single grants (what a Role must contain). */
export function usesToGrants(uses: ApiUse[]): Grant[] {
  const out: Grant[] = [];
  for (const u of uses)
    for (const verb of u.verbs)
      for (const resourceName of u.resourceNames ?? ['']) {
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
    const scope = u.namespace
      ? `${u.namespace}${u.resourceNames ? ` (${u.resourceNames.join(', ')})` : ''}`
      : 'cluster';
    const key = `${scope}|${u.apiGroup}|${u.resource}`;
    const row = rows.get(key) ?? { scope, group: u.apiGroup || 'core', resource: u.resource, verbs: new Map() };
    for (const v of u.verbs) row.verbs.set(v, new Set([...(row.verbs.get(v) ?? []), u.by]));
    rows.set(key, row);
  }
  const lines = ['| scope | group | resource | verb: used by |', '|---|---|---|---|'];
  for (const r of [...rows.values()].sort((a, b) =>
    `${a.scope}${a.group}${a.resource}`.localeCompare(`${b.scope}${b.group}${b.resource}`),
  )) {
    const verbs = sortVerbs([...r.verbs.keys()])
      .map((v) => `${v}: ${[...(r.verbs.get(v) ?? [])].join(', ')}`)
      .join('; ');
    lines.push(`| ${r.scope} | ${r.group} | ${r.resource} | ${verbs} |`);
  }
  return lines.join('\n');
}
