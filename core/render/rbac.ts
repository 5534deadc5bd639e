import type { KubeObject } from '../kube.ts';
import type { ObjectNames } from './names.ts';

/**
 * The agent's identity in the cluster: one ServiceAccount per pool (`ps-<pool>`), and nothing else. Its
 * rights are static and shipped with the cluster side (infra/cluster/agent/rbac.yaml, checked against
 * core/security/agent-permissions.ts): the reconciler writes no Role, RoleBinding, ClusterRole or
 * ClusterRoleBinding at run time, so its own identity holds no verb on RBAC objects at all.
 */
export function renderRbac(names: ObjectNames, namespace: string, labels: Record<string, string>): KubeObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: names.base, namespace, labels },
      automountServiceAccountToken: false,
    },
  ];
}
