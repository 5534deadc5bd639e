/** The pure domain core of the pool-spirit reconciler: no network, no filesystem, no clock, no randomness. */
export * from './kube.ts';
export * from './hash.ts';
export * from './quantity.ts';
export * from './poolspirit/api.ts';
export * from './poolspirit/defaults.ts';
export * from './poolspirit/owned-flags.ts';
export * from './poolspirit/resolved.ts';
export { parsePoolSpiritSpec, type ParseOptions } from './poolspirit/parse.ts';
export { poolSpiritCrd } from './poolspirit/crd.ts';
export { nodePoolCrd } from './nodepool-crd.ts';
export * from './nodepool-versions.ts';
export { zodToStructural, type StructuralSchema } from './crd/structural.ts';
export { manifestYaml } from './crd/yaml.ts';
export * from './nodepool.ts';
export { renderPoolSpirit, renderPoolSpiritService, type RenderInput, type RenderResult } from './render/index.ts';
export { webCryptoKeyFactory, cachingKeyFactory, type KeyFactory } from './render/keys.ts';
export { DEFAULT_PKI_POLICY, AGENT_USER, AGENT_GROUP, type PkiPolicy } from './render/pki-spec.ts';
export { PKI_FILES } from './render/pki.ts';
export { existingPkiFromSecrets, PKI_SECRET_KEYS } from './render/secrets.ts';
export { objectNames, type ObjectNames } from './render/names.ts';
export {
  managedLabels,
  managedSelector,
  labelValue,
  MANAGED_BY_LABEL,
  MANAGED_BY,
  POOL_LABEL,
} from './render/labels.ts';
export { SpecRenderError } from './render/overrides.ts';
export { componentChanges, workloadVersions, type ComponentChange } from './render/changes.ts';
export {
  bootstrapManifests,
  BOOTSTRAP_HASH_ANNOTATION,
  BOOTSTRAP_MANIFESTS_KEY,
  BOOTSTRAP_HASH_KEY,
} from './render/bootstrap.ts';
export { ANNOTATIONS, LOST_NODE_TOLERATION_SECONDS } from './render/workload.ts';
export * from './render/layout.ts';
export { objectsToApply, objectsToDelete } from './plan.ts';
export { fieldDiffs } from './diff.ts';
export {
  poolSpiritStatus,
  meaningfulTransitions,
  observeWorkload,
  type StatusInputs,
  type StatusEvent,
  type WorkloadObservation,
} from './status.ts';
export { ETCD_MAINTENANCE, etcdNeedsDefrag, etcdNearQuota, certificatesExpireWithin } from './etcd-health.ts';
