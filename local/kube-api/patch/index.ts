/** Patch algorithms of the local Kubernetes API; see each module for the upstream behaviour it follows. */
export { applyMergePatch } from './merge-patch.ts';
export { applyJsonPatch } from './json-patch.ts';
export { applyStrategicMergePatch } from './strategic/index.ts';
export { serverSideApply, beforeFirstApplyManager } from './server-side-apply.ts';
export { updateManagedFields } from './update-managed-fields.ts';
export { fieldsV1Paths, fieldsV1ToFieldSet, fieldSetToFieldsV1 } from './fieldpath/fields-v1.ts';
export { applyConflictStatus, type ManagerConflict } from './managed/conflicts.ts';
export { lastAppliedAnnotation } from './managed/last-applied.ts';
export * from './types.ts';
