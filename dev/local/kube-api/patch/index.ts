/**
 * Patch algorithms of the local Kubernetes API, each following its upstream counterpart (see the module).
 *
 * For the HTTP layer:
 * - merge/JSON/strategic patches return the patched object; then call `updateManagedFields` with the
 *   stored object as `before` and the patched one as `after` and store the entries it returns. Creates and
 *   updates call it the same way (`before` undefined for a create).
 * - `serverSideApply` returns the whole object to store, managedFields included.
 * - Pass `resetFields: [['status']]` for the main resource of a kind with a status subresource, and
 *   `subresource: 'status'` for writes to `/status` (which then only change status).
 * - Errors: `PatchError` (400/422, the message is kube's Status message), `PatchInternalError` (500 with
 *   reason Unknown, as kube reports bare Go errors), `ApplyConflictError` (409; `applyConflictStatus`
 *   builds kube's Status body with FieldManagerConflict causes). Strategic merge patch is for built-in
 *   kinds only: kube answers 415 for custom resources before getting here.
 */

export { fieldSetToFieldsV1, fieldsV1Paths, fieldsV1ToFieldSet } from './fieldpath/fields-v1.ts';
export { applyJsonPatch } from './json-patch.ts';
export { ancientChangesManager, maxUpdateManagers } from './managed/cap-managers.ts';
export { applyConflictStatus, type ManagerConflict } from './managed/conflicts.ts';
export { lastAppliedAnnotation } from './managed/last-applied.ts';
export { applyMergePatch } from './merge-patch.ts';
export { beforeFirstApplyManager, serverSideApply } from './server-side-apply.ts';
export { applyStrategicMergePatch } from './strategic/index.ts';
export * from './types.ts';
export { updateManagedFields } from './update-managed-fields.ts';
