/** The pure domain core of the pool-spirit reconciler: no network, no filesystem, no clock, no randomness. */

export { type StructuralSchema, zodToStructural } from './crd/structural.ts';
export { manifestYaml } from './crd/yaml.ts';
export { covers, fieldDiffs } from './diff.ts';
export { certificatesExpireWithin, ETCD_MAINTENANCE, etcdNearQuota, etcdNeedsDefrag } from './etcd-health.ts';
export * from './hash.ts';
export * from './kube.ts';
export * from './nodepool.ts';
export { nodePoolCrd } from './nodepool-crd.ts';
export * from './nodepool-versions.ts';
export { objectsToApply, objectsToDelete } from './plan.ts';
export * from './poolspirit/api.ts';
export { poolSpiritCrd } from './poolspirit/crd.ts';
export * from './poolspirit/defaults.ts';
export * from './poolspirit/owned-flags.ts';
export { type ParseOptions, parsePoolSpiritSpec } from './poolspirit/parse.ts';
export * from './poolspirit/resolved.ts';
export * from './quantity.ts';
export {
  BOOTSTRAP_HASH_ANNOTATION,
  BOOTSTRAP_HASH_KEY,
  BOOTSTRAP_MANIFESTS_KEY,
  bootstrapManifests,
} from './render/bootstrap.ts';
export { type ComponentChange, componentChanges, workloadVersions } from './render/changes.ts';
export {
  type RenderInput,
  type RenderResult,
  renderPoolSpirit,
  renderPoolSpiritObjects,
  renderPoolSpiritService,
} from './render/index.ts';
export { cachingKeyFactory, type KeyFactory, webCryptoKeyFactory } from './render/keys.ts';
export {
  labelValue,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  managedLabels,
  managedSelector,
  POOL_LABEL,
} from './render/labels.ts';
export * from './render/layout.ts';
export { type ObjectNames, objectNames } from './render/names.ts';
export { SpecRenderError } from './render/overrides.ts';
export { PKI_FILES, type PkiProof } from './render/pki.ts';
export { AGENT_GROUP, AGENT_USER, DEFAULT_PKI_POLICY, type PkiPolicy } from './render/pki-spec.ts';
export { existingPkiFromSecrets, PKI_SECRET_KEYS } from './render/secrets.ts';
export { ANNOTATIONS, LOST_NODE_TOLERATION_SECONDS } from './render/workload.ts';
export {
  meaningfulTransitions,
  observeWorkload,
  poolSpiritStatus,
  type StatusEvent,
  type StatusInputs,
  type WorkloadObservation,
} from './status.ts';
