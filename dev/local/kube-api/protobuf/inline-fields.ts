/**
 * Go structs embedded with `json:",inline"` in the served kinds. Protobuf keeps them as a nested message
 * field (Volume.volumeSource, Probe.handler ...), while kube's JSON spreads their fields into the parent
 * (`volumes[].configMap`, `readinessProbe.httpGet`, `env[].valueFrom.secretKeyRef.name`).
 *
 * The list is the proto message fields of the served kinds that have no property of that name in the
 * OpenAPI schema while the embedded message's fields are there (schema/builtin-schemas.json against
 * descriptors.json); it matches the `json:",inline"` embeddings of k8s.io/api core/v1
 * (apps, rbac and coordination have none).
 */
export const INLINE_FIELDS: ReadonlySet<string> = new Set(
  [
    'ConfigMapEnvSource.localObjectReference',
    'ConfigMapKeySelector.localObjectReference',
    'ConfigMapProjection.localObjectReference',
    'ConfigMapVolumeSource.localObjectReference',
    'SecretEnvSource.localObjectReference',
    'SecretKeySelector.localObjectReference',
    'SecretProjection.localObjectReference',
    'EphemeralContainer.ephemeralContainerCommon',
    'Probe.handler',
    'Volume.volumeSource',
    'PersistentVolumeSpec.persistentVolumeSource',
  ].map((f) => `k8s.io.api.core.v1.${f}`),
);
