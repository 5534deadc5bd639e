import * as z from '../shared/zod.ts';
import { eventEnvelopeSchema } from './envelope.ts';
import { AUDIT_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from './source.ts';

/**
 * Asks the audit function to audit one registered cluster. The scheduled audit fans out one per cluster so
 * a slow or unreachable cluster only delays (and retries) its own audit. `runId` + `requestedAt` name the
 * audit run: a duplicate delivery writes the same audit record again instead of a second one.
 */
export const auditRequestDetailSchema = z.object({
  clusterId: z.string().check(z.minLength(1), z.maxLength(128)),
  runId: z.string().check(z.minLength(1), z.maxLength(200), z.regex(/^[^#]+$/, 'must not contain "#"')),
  requestedAt: z.iso.datetime({ offset: true }),
  /** Who asked: `schedule`, `spiritctl`, ... */
  requestedBy: z.string().check(z.minLength(1), z.maxLength(128)),
});
export type AuditRequest = z.infer<typeof auditRequestDetailSchema>;

export const auditRequestRouting = { source: RECONCILER_SOURCE, detailType: AUDIT_REQUEST_DETAIL_TYPE } as const;

export const auditRequestEventSchema = z.extend(eventEnvelopeSchema(auditRequestDetailSchema), {
  source: z.literal(RECONCILER_SOURCE),
  'detail-type': z.literal(AUDIT_REQUEST_DETAIL_TYPE),
});
export type AuditRequestEvent = z.infer<typeof auditRequestEventSchema>;
