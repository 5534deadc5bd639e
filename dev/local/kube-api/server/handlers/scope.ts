/** What every resource handler gets, plus the query options shared by the write verbs. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceInfo } from '../../registry.ts';
import type { ApiContext } from '../context.ts';
import { badRequest, cause, invalid } from '../errors.ts';
import type { FieldValidation } from '../peers.ts';
import type { RequestRecord } from '../request-log.ts';
import type { ResourceRequest } from '../routes.ts';
import type { ObjectStore, WriteOptions } from '../store.ts';

export interface Scope {
  ctx: ApiContext;
  store: ObjectStore;
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  route: ResourceRequest;
  info: ResourceInfo;
  record: RequestRecord;
  warnings: string[];
  /** Fault injection: cut this watch after so many milliseconds. */
  dropWatchAfterMs?: number;
}

export type Handler = (scope: Scope) => Promise<void>;

/** kube's default field manager: the user agent up to the first `/`. */
export function defaultManager(userAgent: string): string {
  return (userAgent.split('/')[0] || 'unknown').slice(0, 128);
}

export function isDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values) {
    if (v !== 'All') throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}. Supported values: "All"`);
  }
  return values.length > 0;
}

export function fieldValidation(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`invalid fieldValidation directive: ${v}, must be one of: Strict, Warn, Ignore`);
}

/** Options of create/update/patch from the query; `requireManager` for apply patches. */
export function writeOptions(
  scope: Scope,
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  requireManager = false,
): WriteOptions {
  const q = scope.query;
  const explicit = q.get('fieldManager');
  if (explicit !== null && explicit.length > 128) {
    throw invalid({ group: 'meta.k8s.io', kind }, '', [
      cause('FieldValueTooLong', 'fieldManager', `Too long: may not be longer than 128`),
    ]);
  }
  if (requireManager && !explicit) {
    throw invalid({ group: 'meta.k8s.io', kind }, '', [
      cause('FieldValueRequired', 'fieldManager', 'Required value: is required for apply patch'),
    ]);
  }
  const fieldManager = explicit || defaultManager(scope.record.userAgent);
  scope.record.fieldManager = fieldManager;
  const dryRun = isDryRun(q);
  scope.record.dryRun = dryRun;
  const verb = kind === 'CreateOptions' ? 'create' : kind === 'UpdateOptions' ? 'update' : 'patch';
  return {
    dryRun,
    fieldManager,
    fieldValidation: fieldValidation(q),
    warnings: scope.warnings,
    verb,
  };
}
