import type { LeafSpec } from '../render/pki-spec.ts';

/**
 * The client identity every compat YurtHub of a cluster shares (upstream: one Secret per cluster, so one
 * certificate). Upstream issues it as `CN=admin, O=system:masters`; here it is a plain user and group that
 * only the role below is bound to inside each compat pool-spirit, and that nothing in the host cluster
 * knows (it is signed by the cluster's own coordinator client CA, which only compat pool-spirits trust).
 */
export const COORDINATOR_CLIENT_USER = 'poolspirit:yurt-coordinator-yurthub';
export const COORDINATOR_CLIENT_GROUP = 'poolspirit:yurt-coordinator-yurthubs';
export const COORDINATOR_CLIENT_CA_SUBJECT = 'CN=poolspirit-yurt-coordinator-client-ca, O=pool-spirit';

export const coordinatorClientLeaf: LeafSpec = {
  id: 'yurt-coordinator-yurthub-client',
  issuer: 'yurt-coordinator-client-ca',
  subject: `CN=${COORDINATOR_CLIENT_USER}, O=${COORDINATOR_CLIENT_GROUP}`,
  dns: [],
  ips: [],
  usages: ['clientAuth'],
};

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/**
 * What a real YurtHub v1.5.0 asks of the coordinator apiserver (read from its source, then checked against
 * the requests the real hubs make: test/e2e/yurthub/election.e2e.test.ts fails if a rule held is not used or a
 * request is refused, from each pool-spirit apiserver's audit log): the leader election on kube-system/yurthub and the
 * informer-sync Lease (the leader deletes and re-creates it), every hub's node Lease in kube-node-lease (its
 * coordinator health probe) and the lease informer over all of them (the leader delegates heartbeats); the
 * Node a new node Lease names as its owner; the pool-scoped lists a follower's pool proxy serves from the
 * coordinator (endpoints, endpointslices). Nothing else: no Secrets, no RBAC, no Pods, no writes but Leases.
 */
export const COORDINATOR_CLIENT_RULES: PolicyRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
  },
  { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
  // Only list and watch: YurtHub sends a get of a pool-scoped object to the host, never to the coordinator.
  { apiGroups: [''], resources: ['endpoints'], verbs: ['list', 'watch'] },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
];

const rbac = 'rbac.authorization.k8s.io/v1';

/** The role and binding inside a compat pool-spirit (applied by its agent with the rest of the bootstrap). */
export function coordinatorClientRbac(): Array<
  Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string } }
> {
  const name = 'poolspirit:yurt-coordinator-yurthub';
  return [
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules: COORDINATOR_CLIENT_RULES },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: COORDINATOR_CLIENT_GROUP }],
    },
  ];
}
