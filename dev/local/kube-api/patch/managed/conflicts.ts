/** Apply conflicts in kube-apiserver's words (fieldmanager's NewConflictError). */
import { displayPath, type Path } from '../fieldpath/path-element.ts';
import { type ApplyConflict, ApplyConflictError } from '../types.ts';
import { type ManagerRecord, managerId } from './entries.ts';

export interface ManagerConflict extends ApplyConflict {
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  /** The Status cause message, e.g. `conflict with "kubectl-edit" using apps/v1`. */
  causeMessage: string;
}

/** printManager: appliers by name, updaters with the API version they wrote. */
function printManager(r: ManagerRecord): string {
  const name = JSON.stringify(r.manager);
  return r.operation === 'Update' ? `${name} using ${r.apiVersion}` : name;
}

export function applyConflictError(found: Array<{ record: ManagerRecord; paths: Path[] }>): ApplyConflictError {
  const sorted = [...found].sort((a, b) => (managerId(a.record) < managerId(b.record) ? -1 : 1));
  const conflicts: ManagerConflict[] = sorted.flatMap(({ record, paths }) =>
    paths.map((p) => ({
      manager: record.manager,
      field: displayPath(p),
      operation: record.operation,
      apiVersion: record.apiVersion,
      ...(record.subresource ? { subresource: record.subresource } : {}),
      causeMessage: `conflict with ${printManager(record)}`,
    })),
  );
  const err = new ApplyConflictError(conflicts);
  const [only] = conflicts;
  if (conflicts.length === 1 && only) {
    err.message = `Apply failed with 1 conflict: ${only.causeMessage}: ${only.field}`;
  } else {
    const lines = sorted.flatMap(({ record, paths }) => [
      `conflicts with ${printManager(record)}:`,
      ...paths.map((p) => `- ${displayPath(p)}`),
    ]);
    err.message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return err;
}

/** The 409 Status body kube-apiserver sends for an ApplyConflictError. */
export function applyConflictStatus(err: ApplyConflictError) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: 'Conflict',
    details: {
      causes: err.conflicts.map((c) => ({
        reason: 'FieldManagerConflict',
        message: (c as Partial<ManagerConflict>).causeMessage ?? `conflict with ${JSON.stringify(c.manager)}`,
        field: c.field,
      })),
    },
    code: 409,
  };
}
