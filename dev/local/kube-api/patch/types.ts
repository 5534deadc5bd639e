import type { SchemaNode } from '../schema/types.ts';

export type JsonObject = Record<string, unknown>;

/** metadata.managedFields entry, as kube-apiserver stores it (fieldsType FieldsV1). */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

/** A server-side apply conflict: another manager owns a field the applier sets to a different value. */
export interface ApplyConflict {
  manager: string;
  /** Field path in kube-apiserver's message form, e.g. `.spec.replicas` or `.spec.containers[name="etcd"].image`. */
  field: string;
}

export class ApplyConflictError extends Error {
  readonly conflicts: ApplyConflict[];
  constructor(conflicts: ApplyConflict[]) {
    super(`Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}`);
    this.name = 'ApplyConflictError';
    this.conflicts = conflicts;
  }
}

/** A patch that cannot be applied (bad JSON patch op, failed test op, bad directive): 422 or 400 upstream. */
export class PatchError extends Error {
  readonly status: 400 | 422;
  constructor(message: string, status: 400 | 422 = 422) {
    super(message);
    this.name = 'PatchError';
    this.status = status;
  }
}

export interface ServerSideApplyInput {
  /** Current object, or undefined when the apply creates it. Includes metadata.managedFields. */
  live: JsonObject | undefined;
  /** The applied configuration (partial object) as sent by the client. */
  applied: JsonObject;
  manager: string;
  force: boolean;
  /** Schema of the whole object; undefined means "no type info" (lists atomic, maps granular). */
  schema: SchemaNode | undefined;
  /** 'status' when applied to the status subresource. */
  subresource?: string;
  now: string;
}

export interface ManagedFieldsUpdateInput {
  before: JsonObject | undefined;
  after: JsonObject;
  manager: string;
  schema: SchemaNode | undefined;
  subresource?: string;
  now: string;
}

/**
 * A failure kube-apiserver reports as a bare Go error rather than a Status: HTTP 500 with reason
 * `Unknown` and this message as is (e.g. `map: map[image:x] does not contain declared merge key: name`
 * from a strategic merge patch, or `failed to create typed patch object (...)` from server-side apply).
 */
export class PatchInternalError extends Error {
  readonly status = 500;
  readonly reason = 'Unknown';
  constructor(message: string) {
    super(message);
    this.name = 'PatchInternalError';
  }
}

/** A field path as a list of JSON keys from the object root, e.g. `['status']` or `['metadata', 'labels']`. */
export type FieldPathKeys = readonly string[];

export interface ServerSideApplyOptions extends ServerSideApplyInput {
  /**
   * Fields this endpoint resets (kube's strategy GetResetFields): the applier never owns them, changes to
   * them never conflict, and the result keeps the live values. Default: none for the main resource; for
   * `subresource: 'status'` every top-level field except `status` (and `apiVersion`, `kind`, `metadata`).
   * A main resource with a status subresource should pass `[['status']]`.
   */
  resetFields?: readonly FieldPathKeys[];
}

export interface ManagedFieldsUpdateOptions extends ManagedFieldsUpdateInput {
  /** As ServerSideApplyOptions.resetFields: changes under these paths give no ownership. */
  resetFields?: readonly FieldPathKeys[];
}
