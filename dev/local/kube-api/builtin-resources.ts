/**
 * The built-in kinds the local API serves, as data. Names, short names, categories and verbs are the ones
 * kube-apiserver 1.32 advertises in discovery, so kubectl resolves `po`, `deploy`, `crd`, `all` the same way.
 */
import { ALL_VERBS, makeResourceInfo, type ResourceInfo, type ScalePaths } from './registry.ts';
import type { SchemaNode } from './schema/types.ts';

type SchemaLookup = (group: string, version: string, kind: string) => SchemaNode | undefined;

interface BuiltinSpec {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  status?: boolean;
  scale?: ScalePaths;
  tracksGeneration?: boolean;
}

const NO_DELETECOLLECTION = ALL_VERBS.filter((v) => v !== 'deletecollection');

const BUILTINS: BuiltinSpec[] = [
  {
    group: '',
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    verbs: NO_DELETECOLLECTION,
    status: true,
  },
  { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], status: true },
  {
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    status: true,
    tracksGeneration: true,
  },
  {
    group: '',
    version: 'v1',
    resource: 'services',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    status: true,
  },
  { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  {
    group: '',
    version: 'v1',
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
    shortNames: ['sa'],
  },
  { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  // YurtHub's pool-scope data: the leader copies Endpoints and EndpointSlices into the pool-spirit.
  { group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints', namespaced: true, shortNames: ['ep'] },
  { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true },
  // The cluster-side install (infra/cluster) restricts pool-spirit traffic with NetworkPolicies.
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'networkpolicies',
    kind: 'NetworkPolicy',
    namespaced: true,
    shortNames: ['netpol'],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    status: true,
    scale: {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.spec.selector',
    },
    tracksGeneration: true,
  },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'rolebindings',
    kind: 'RoleBinding',
    namespaced: true,
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'clusterroles',
    kind: 'ClusterRole',
    namespaced: false,
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    status: true,
    tracksGeneration: true,
  },
];

export function builtinResources(schemaFor: SchemaLookup): ResourceInfo[] {
  return BUILTINS.map((b) => {
    let cached: SchemaNode | undefined | null = null;
    return makeResourceInfo({
      group: b.group,
      version: b.version,
      resource: b.resource,
      kind: b.kind,
      namespaced: b.namespaced,
      shortNames: b.shortNames ?? [],
      categories: b.categories ?? [],
      verbs: b.verbs ?? ALL_VERBS,
      subresources: { status: b.status ?? false, scale: b.scale },
      custom: false,
      tracksGeneration: b.tracksGeneration ?? false,
      schema: () => {
        if (cached === null) cached = schemaFor(b.group, b.version, b.kind);
        return cached;
      },
    });
  });
}
