import { stableHash } from '../hash.ts';
import type { KubeObject } from '../kube.ts';
import { nodePoolCrd } from '../nodepool-crd.ts';
// The manifests below as YAML text, written by scripts/generate-crds.ts (a test holds it to them): the
// functions put it in every pool's ConfigMap without loading a YAML writer at start (docs/deploy.md).
import rendered from './bootstrap-manifests.json' with { type: 'json' };
import type { ObjectNames } from './names.ts';

export const BOOTSTRAP_HASH_ANNOTATION = 'poolspirit.io/bootstrap-hash';
export const BOOTSTRAP_MANIFESTS_KEY = 'manifests.yaml';
export const BOOTSTRAP_HASH_KEY = 'hash';

const rbac = 'rbac.authorization.k8s.io/v1';
const nodes = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' };

/**
 * What must exist inside a pool-spirit apiserver from the moment it starts, in apply order. The agent
 * applies it (again after every restart, since etcd is in memory, and whenever the hash changes).
 *
 * - kube-system: YurtHubs elect their leader on the Lease kube-system/yurthub.
 * - The NodePool CRD: YurtHubs read their pool there.
 * - poolspirit:yurthub, bound to system:nodes: everything YurtHubs may do, instead of upstream's
 *   system:masters. YurtHubs authenticate with their node certificates (group system:nodes), and the
 *   apiserver authorizes by RBAC alone, so this role is the whole of it: Leases (the leader election on
 *   kube-system/yurthub, each hub's kube-node-lease/<node>), Nodes, reading NodePools, and the pool-scoped
 *   Endpoints and EndpointSlices the leader copies in.
 *
 * There is no system:nodes → admin binding (the grant openyurt#777 asked for): `admin` is an aggregated
 * role whose rules kube-controller-manager's aggregation controller fills, and a pool-spirit runs no
 * controller-manager, so on the real apiserver `admin` has no rules at all and the binding granted nothing.
 */
export function bootstrapManifests(): KubeObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } },
    nodePoolCrd(),
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'poolspirit:yurthub' },
      rules: [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        },
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
        { apiGroups: ['apps.openyurt.io'], resources: ['nodepools'], verbs: ['get', 'list', 'watch'] },
        {
          apiGroups: [''],
          resources: ['endpoints'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        },
        {
          apiGroups: ['discovery.k8s.io'],
          resources: ['endpointslices'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        },
      ],
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'poolspirit:yurthub' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'poolspirit:yurthub' },
      subjects: [nodes],
    },
  ];
}

export interface RenderedBootstrap {
  configMap: KubeObject;
  hash: string;
}

/** The manifests are the same for every pool: hashed once per container. */
let serialised: { hash: string; yaml: string } | undefined;
function serialisedManifests(): { hash: string; yaml: string } {
  serialised ??= { hash: stableHash(bootstrapManifests()), yaml: rendered.plain };
  return serialised;
}

/** The compat pools' manifests (core/yurt-coordinator/pool.ts) as YAML text, pre-rendered as the plain ones. */
export const COMPAT_BOOTSTRAP_MANIFESTS_YAML: string = rendered.compat;

export function renderBootstrap(
  names: ObjectNames,
  namespace: string,
  labels: Record<string, string>,
): RenderedBootstrap {
  const { hash, yaml } = serialisedManifests();
  return {
    hash,
    configMap: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: names.bootstrapConfigMap,
        namespace,
        labels,
        annotations: { [BOOTSTRAP_HASH_ANNOTATION]: hash },
      },
      data: { [BOOTSTRAP_MANIFESTS_KEY]: yaml, [BOOTSTRAP_HASH_KEY]: hash },
    },
  };
}
