/**
 * Kubernetes' own API groups (core is ''). Code that must tell a built-in kind from a custom resource —
 * the etcd key layout, field-selector rules, the managed-fields Go-struct heuristic — asks here, so the
 * answer is the same everywhere.
 */
export const KUBERNETES_API_GROUPS: ReadonlySet<string> = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/** Built-in groups kube-apiserver nevertheless keys in etcd with the group (their servers are separate). */
export const GROUPS_KEYED_WITH_GROUP: ReadonlySet<string> = new Set(['apiextensions.k8s.io', 'apiregistration.k8s.io']);

export function isKubernetesApiGroup(group: string): boolean {
  return KUBERNETES_API_GROUPS.has(group);
}
