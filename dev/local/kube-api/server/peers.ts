/**
 * The modules the HTTP layer calls but other parts own: patch algorithms, schemas, selectors, Table
 * printing, name validation, fault injection and garbage collection — gathered here so the server's own
 * files depend on one place.
 */

export * as faultsModule from '../faults.ts';
export * as gcModule from '../gc.ts';
export * as patchModule from '../patch/index.ts';
export * as schemaModule from '../schema/index.ts';
export * as selectorsModule from '../selectors.ts';
export * as tableModule from '../table.ts';
export * as namesModule from '../validation/names.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';
export type { ApiObject, JsonObject, ObjectMeta, OwnerReference } from '../api-object.ts';
export type { FaultDecision } from '../faults.ts';
