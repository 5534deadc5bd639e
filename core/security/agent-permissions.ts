/**
 * The pool agents' rights in the cluster, as static RBAC objects: the one source of truth that
 * infra/cluster/agent/rbac.yaml is checked against (test/infra/cluster/agent/agent-rbac.test.ts) and that the local
 * stacks with RBAC install (they install infra/cluster).
 *
 * Why static: when the reconciler rendered a Role/RoleBinding and a ClusterRole/ClusterRoleBinding per
 * pool, its identity had to hold create/patch on all four RBAC kinds with no resourceNames, and with that
 * it could weaken any role (cluster-admin included), bind its own roles to anyone and hand any right it
 * holds (the pools' CA key Secrets) to anyone — Kubernetes' escalation check allows all three. Now it holds
 * no verb on RBAC objects, and what the agent needs is installed once, by the operator.
 *
 * What the agent calls (agent/adapters/host.ts), and so all it gets:
 * - get on ConfigMaps in the product namespace: it reads its bootstrap ConfigMap by name every
 *   --bootstrap-interval (no list, no watch); a static Role cannot name every pool's ConfigMap, so the
 *   get is not narrowed by resourceNames;
 * - patch on poolspirits/status: a JSON merge patch of its own sections (leader, bootstrap, etcd) of its
 *   PoolSpirit's status; never get or update.
 *
 * Subject: the group of the product namespace's ServiceAccounts (`system:serviceaccounts:<ns>`), because a
 * static binding cannot name the per-pool ServiceAccounts (`ps-<pool>`) and RBAC has no name patterns.
 * Who else is in that group: the forwarder's ServiceAccount (`pool-spirit-forwarder`) and any ServiceAccount
 * an operator adds there. The residue (docs/security.md): any agent, and the forwarder, can read every
 * ConfigMap in the namespace (bootstrap manifests, which hold no secrets; the forwarder's settings) and
 * patch any PoolSpirit's status; the opt-in component infra/cluster/components/agent-status-admission
 * restricts status writes of `system:serviceaccount:<ns>:ps-<pool>` to PoolSpirit `<pool>` and refuses
 * them to every other ServiceAccount of the namespace.
 */
import type { KubeObject } from '../kube.ts';
import { GROUP as POOLSPIRIT_GROUP, PLURAL as POOLSPIRIT_PLURAL } from '../poolspirit/names.ts';

export const AGENT_ROLE_NAME = 'pool-spirit-agent';

/** The Kubernetes group every ServiceAccount of `namespace` is in (the agents' static bindings bind it). */
export function agentGroup(namespace: string): string {
  return `system:serviceaccounts:${namespace}`;
}

/** The Role, ClusterRole and their bindings that give every pool's agent its rights. */
export function agentRbac(namespace: string): KubeObject[] {
  const rbac = 'rbac.authorization.k8s.io';
  const subjects = [{ apiGroup: rbac, kind: 'Group', name: agentGroup(namespace) }];
  return [
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: AGENT_ROLE_NAME },
      rules: [{ apiGroups: [POOLSPIRIT_GROUP], resources: [`${POOLSPIRIT_PLURAL}/status`], verbs: ['patch'] }],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: AGENT_ROLE_NAME },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: AGENT_ROLE_NAME },
      subjects,
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name: AGENT_ROLE_NAME, namespace },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: AGENT_ROLE_NAME, namespace },
      roleRef: { apiGroup: rbac, kind: 'Role', name: AGENT_ROLE_NAME },
      subjects,
    },
  ];
}
