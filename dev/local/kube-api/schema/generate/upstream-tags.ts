/**
 * Facts the TypeScript declarations in `kubernetes-types` do not carry, copied by hand from the Go struct
 * tags and `+listType`/`+mapType`/`+structType` markers of k8s.io/api 1.30 (core/v1, apps/v1, rbac/v1,
 * coordination/v1), k8s.io/apimachinery meta/v1 and apiextensions-apiserver v1, as published in the
 * upstream api/openapi-spec. Keys are `<TypeName>.<jsonField>` of the Go type that declares the field.
 *
 * Lists not named here are `atomic`: upstream marked every remaining list of these kinds atomic.
 */

export interface ListTags {
  listType: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  patchStrategy?: string;
  patchMergeKey?: string;
}

const mergeMap = (key: string, listMapKeys: string[] = [key], patchStrategy = 'merge'): ListTags => ({
  listType: 'map',
  listMapKeys,
  patchStrategy,
  patchMergeKey: key,
});

export const LIST_TAGS: Record<string, ListTags> = {
  // meta/v1
  'ObjectMeta.finalizers': { listType: 'set', patchStrategy: 'merge' },
  'ObjectMeta.ownerReferences': mergeMap('uid'),
  'ObjectMeta.managedFields': { listType: 'atomic' },
  // core/v1 PodSpec
  'PodSpec.volumes': mergeMap('name', ['name'], 'merge,retainKeys'),
  'PodSpec.initContainers': mergeMap('name'),
  'PodSpec.containers': mergeMap('name'),
  'PodSpec.ephemeralContainers': mergeMap('name'),
  'PodSpec.imagePullSecrets': mergeMap('name'),
  'PodSpec.hostAliases': mergeMap('ip'),
  'PodSpec.topologySpreadConstraints': mergeMap('topologyKey', ['topologyKey', 'whenUnsatisfiable']),
  'PodSpec.schedulingGates': mergeMap('name'),
  'PodSpec.resourceClaims': mergeMap('name', ['name'], 'merge,retainKeys'),
  // core/v1 Container and EphemeralContainer
  'Container.ports': mergeMap('containerPort', ['containerPort', 'protocol']),
  'Container.env': mergeMap('name'),
  'Container.volumeMounts': mergeMap('mountPath'),
  'Container.volumeDevices': mergeMap('devicePath'),
  'EphemeralContainer.ports': mergeMap('containerPort', ['containerPort', 'protocol']),
  'EphemeralContainer.env': mergeMap('name'),
  'EphemeralContainer.volumeMounts': mergeMap('mountPath'),
  'EphemeralContainer.volumeDevices': mergeMap('devicePath'),
  'ResourceRequirements.claims': { listType: 'map', listMapKeys: ['name'] },
  // core/v1 PodStatus
  'PodStatus.conditions': mergeMap('type'),
  'PodStatus.podIPs': mergeMap('ip'),
  'PodStatus.hostIPs': mergeMap('ip'),
  'PodStatus.resourceClaimStatuses': mergeMap('name', ['name'], 'merge,retainKeys'),
  'ContainerStatus.volumeMounts': mergeMap('mountPath'),
  // core/v1 Service
  'ServiceSpec.ports': mergeMap('port', ['port', 'protocol']),
  'ServiceStatus.conditions': mergeMap('type'),
  // core/v1 Node and Namespace
  'NodeSpec.podCIDRs': { listType: 'set', patchStrategy: 'merge' },
  'NodeStatus.conditions': mergeMap('type'),
  'NodeStatus.addresses': mergeMap('type'),
  'NamespaceStatus.conditions': mergeMap('type'),
  // core/v1 ServiceAccount
  'ServiceAccount.secrets': mergeMap('name'),
  // apps/v1
  'DeploymentStatus.conditions': mergeMap('type'),
  // apiextensions/v1
  'CustomResourceDefinitionStatus.conditions': { listType: 'map', listMapKeys: ['type'] },
  'JSONSchemaProps.x-kubernetes-validations': mergeMap('rule'),
};

/** Maps whose `+mapType=atomic` replaces them as a whole on apply. */
export const ATOMIC_MAPS = new Set(['PodSpec.nodeSelector', 'ServiceSpec.selector']);

/** Structs marked `+structType=atomic` upstream (x-kubernetes-map-type: atomic on the type). */
export const ATOMIC_STRUCTS = new Set([
  'LabelSelector',
  'LabelSelectorRequirement',
  'OwnerReference',
  'ObjectReference',
  'LocalObjectReference',
  'TypedLocalObjectReference',
  'SecretReference',
  'ConfigMapKeySelector',
  'SecretKeySelector',
  'ObjectFieldSelector',
  'ResourceFieldSelector',
  'NodeSelector',
  'NodeSelectorTerm',
  'TopologySelectorTerm',
  'RoleRef',
  'Subject',
]);

/**
 * Go int64 fields (every other integer is int32). TypeScript only says `number`, so the Go types are
 * recorded here; `*.name` entries apply to that JSON field name on any type.
 */
export const INT64_FIELDS = new Set([
  'ObjectMeta.generation',
  'ObjectMeta.deletionGracePeriodSeconds',
  'ListMeta.remainingItemCount',
  'DeleteOptions.gracePeriodSeconds',
  'Condition.observedGeneration',
  'DeploymentStatus.observedGeneration',
  'PodSpec.activeDeadlineSeconds',
  'PodSpec.terminationGracePeriodSeconds',
  'Probe.terminationGracePeriodSeconds',
  'PodSecurityContext.runAsUser',
  'PodSecurityContext.runAsGroup',
  'PodSecurityContext.fsGroup',
  'PodSecurityContext.supplementalGroups',
  'SecurityContext.runAsUser',
  'SecurityContext.runAsGroup',
  'Toleration.tolerationSeconds',
  'ContainerImage.sizeBytes',
  'ServiceAccountTokenProjection.expirationSeconds',
  'SleepAction.seconds',
  'JSONSchemaProps.maxItems',
  'JSONSchemaProps.maxLength',
  'JSONSchemaProps.maxProperties',
  'JSONSchemaProps.minItems',
  'JSONSchemaProps.minLength',
  'JSONSchemaProps.minProperties',
]);

/** Go float64 fields: `number` with format double. */
export const FLOAT64_FIELDS = new Set([
  'JSONSchemaProps.maximum',
  'JSONSchemaProps.minimum',
  'JSONSchemaProps.multipleOf',
]);

/**
 * Fields upstream serves that the declarations omit: JSONSchemaProps' Kubernetes extensions are Go fields
 * with custom JSON names that kubernetes-types leaves out.
 */
export const SUPPLEMENTED_FIELDS: Record<string, Record<string, SupplementedField>> = {
  JSONSchemaProps: {
    'x-kubernetes-embedded-resource': {
      kind: 'boolean',
      description:
        'x-kubernetes-embedded-resource defines that the value is an embedded Kubernetes runtime.Object, with TypeMeta and ObjectMeta.',
    },
    'x-kubernetes-int-or-string': {
      kind: 'boolean',
      description: 'x-kubernetes-int-or-string specifies that this value is either an integer or a string.',
    },
    'x-kubernetes-list-map-keys': {
      kind: 'string-list',
      description:
        'x-kubernetes-list-map-keys annotates an array with the x-kubernetes-list-type `map` by specifying the keys used as the index of the map.',
    },
    'x-kubernetes-list-type': {
      kind: 'string',
      description: 'x-kubernetes-list-type annotates an array to further describe its topology.',
    },
    'x-kubernetes-map-type': {
      kind: 'string',
      description: 'x-kubernetes-map-type annotates an object to further describe its topology.',
    },
    'x-kubernetes-preserve-unknown-fields': {
      kind: 'boolean',
      description:
        'x-kubernetes-preserve-unknown-fields stops the API server decoding step from pruning fields which are not specified in the validation schema.',
    },
    'x-kubernetes-validations': {
      kind: 'ref-list',
      ref: 'ValidationRule',
      description:
        'x-kubernetes-validations describes a list of validation rules written in the CEL expression language.',
    },
  },
};

export type SupplementedField =
  | { kind: 'boolean' | 'string' | 'string-list'; description: string }
  | { kind: 'ref-list'; ref: string; description: string };
