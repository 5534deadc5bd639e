/**
 * The part of kube-apiserver's bootstrap RBAC policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy,
 * testdata/cluster-roles.yaml of kubernetes/kubernetes at 025f2834: the policy since 1.28, with
 * selfsubjectreviews) that a user-facing cluster needs: cluster-admin, admin, edit, view (admin/edit/view
 * aggregated from the system:aggregate-to-* roles, exactly as in kube), discovery, basic-user,
 * public-info-viewer, and their bindings. Node, controller and volume roles are left out: no kubelet or
 * controller-manager runs here.
 */

import type { ApiObject } from '../server/objects.ts';
import type { PolicyRule } from './types.ts';

const RW = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ = ['get', 'list', 'watch'];
const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const BOOTSTRAP_META = {
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
};

function r(apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]): PolicyRule {
  return { apiGroups, resources, verbs, ...(resourceNames ? { resourceNames } : {}) };
}

function clusterRole(
  name: string,
  rules: PolicyRule[] | null,
  extraLabels: Record<string, string> = {},
  aggregateFrom?: string,
): ApiObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name,
      annotations: { ...BOOTSTRAP_META.annotations },
      labels: { ...BOOTSTRAP_META.labels, ...extraLabels },
    },
    ...(aggregateFrom
      ? {
          aggregationRule: {
            clusterRoleSelectors: [
              { matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${aggregateFrom}`]: 'true' } },
            ],
          },
        }
      : {}),
    ...(rules ? { rules } : {}),
  };
}

const toAdmin = { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' };
const toEdit = { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' };
const toView = { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' };

export const BOOTSTRAP_CLUSTER_ROLES: ApiObject[] = [
  clusterRole('cluster-admin', [r(['*'], ['*'], ['*']), { nonResourceURLs: ['*'], verbs: ['*'] }]),
  clusterRole('admin', null, {}, 'admin'),
  clusterRole('edit', null, toAdmin, 'edit'),
  clusterRole('view', null, toEdit, 'view'),
  clusterRole(
    'system:aggregate-to-admin',
    [
      r(['authorization.k8s.io'], ['localsubjectaccessreviews'], ['create']),
      r(['rbac.authorization.k8s.io'], ['rolebindings', 'roles'], ALL_VERBS),
    ],
    toAdmin,
  ),
  clusterRole(
    'system:aggregate-to-edit',
    [
      r([''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'], READ),
      r([''], ['serviceaccounts'], ['impersonate']),
      r([''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], RW),
      r([''], ['pods/eviction'], ['create']),
      r(
        [''],
        [
          'configmaps',
          'events',
          'persistentvolumeclaims',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'secrets',
          'serviceaccounts',
          'services',
          'services/proxy',
        ],
        RW,
      ),
      r([''], ['serviceaccounts/token'], ['create']),
      r(
        ['apps'],
        [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'replicasets',
          'replicasets/scale',
          'statefulsets',
          'statefulsets/scale',
        ],
        RW,
      ),
      r(['autoscaling'], ['horizontalpodautoscalers'], RW),
      r(['batch'], ['cronjobs', 'jobs'], RW),
      r(
        ['extensions'],
        [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'ingresses',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicationcontrollers/scale',
        ],
        RW,
      ),
      r(['policy'], ['poddisruptionbudgets'], RW),
      r(['networking.k8s.io'], ['ingresses', 'networkpolicies'], RW),
      r(['coordination.k8s.io'], ['leases'], ALL_VERBS),
    ],
    toEdit,
  ),
  clusterRole(
    'system:aggregate-to-view',
    [
      r(
        [''],
        [
          'configmaps',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
        ],
        READ,
      ),
      r(
        [''],
        [
          'bindings',
          'events',
          'limitranges',
          'namespaces/status',
          'pods/log',
          'pods/status',
          'replicationcontrollers/status',
          'resourcequotas',
          'resourcequotas/status',
        ],
        READ,
      ),
      r([''], ['namespaces'], READ),
      r(['discovery.k8s.io'], ['endpointslices'], READ),
      r(
        ['apps'],
        [
          'controllerrevisions',
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'statefulsets',
          'statefulsets/scale',
          'statefulsets/status',
        ],
        READ,
      ),
      r(['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], READ),
      r(['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], READ),
      r(
        ['extensions'],
        [
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'ingresses',
          'ingresses/status',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'replicationcontrollers/scale',
        ],
        READ,
      ),
      r(['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status'], READ),
      r(['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies'], READ),
    ],
    toView,
  ),
  clusterRole('system:basic-user', [
    r(['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], ['create']),
    r(['authentication.k8s.io'], ['selfsubjectreviews'], ['create']),
  ]),
  clusterRole('system:discovery', [
    {
      nonResourceURLs: [
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
        '/healthz',
        '/livez',
        '/openapi',
        '/openapi/*',
        '/readyz',
        '/version',
        '/version/',
      ],
      verbs: ['get'],
    },
  ]),
  clusterRole('system:public-info-viewer', [
    { nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] },
  ]),
];

function clusterRoleBinding(name: string, role: string, groups: string[]): ApiObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, annotations: { ...BOOTSTRAP_META.annotations }, labels: { ...BOOTSTRAP_META.labels } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  };
}

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: ApiObject[] = [
  clusterRoleBinding('cluster-admin', 'cluster-admin', ['system:masters']),
  clusterRoleBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
  clusterRoleBinding('system:discovery', 'system:discovery', ['system:authenticated']),
  clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', [
    'system:authenticated',
    'system:unauthenticated',
  ]),
];
