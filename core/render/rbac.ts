import { GROUP, PLURAL } from '../poolspirit/api.ts';
import type { KubeObject } from '../kube.ts';
import type { ObjectNames } from './names.ts';

/**
 * The agent's rights in the cluster, and nothing more:
 * - read (get, watch) its own bootstrap ConfigMap, by name;
 * - read and write (get, update, patch) the status of its own PoolSpirit, by name.
 * resourceNames cannot limit list or create, so neither is granted; a watch on one name works with a
 * metadata.name field selector.
 */
export function renderRbac(names: ObjectNames, namespace: string, poolSpiritName: string, labels: Record<string, string>): KubeObject[] {
  const subject = { kind: 'ServiceAccount', name: names.base, namespace };
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: names.base, namespace, labels },
      automountServiceAccountToken: false,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: names.role, namespace, labels },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [names.bootstrapConfigMap], verbs: ['get', 'watch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: names.role, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.role },
      subjects: [subject],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: names.clusterRole, labels },
      rules: [{ apiGroups: [GROUP], resources: [`${PLURAL}/status`], resourceNames: [poolSpiritName], verbs: ['get', 'update', 'patch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: names.clusterRole, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.clusterRole },
      subjects: [subject],
    },
  ];
}
