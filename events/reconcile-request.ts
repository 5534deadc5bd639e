import * as z from '../shared/zod.ts';
import { eventEnvelopeSchema } from './envelope.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from './source.ts';

/**
 * Asks for one (cluster, NodePool) key to be reconciled. Level-triggered: the request only names the key,
 * the reconcile function reads current state itself. Unknown fields are stripped, not rejected, so senders
 * may add fields without breaking older receivers.
 */
export const reconcileRequestDetailSchema = z.object({
  clusterId: z.string().check(z.minLength(1), z.maxLength(128)),
  nodePool: z.string().check(z.minLength(1), z.maxLength(253)),
  /** Why the reconcile was asked for, e.g. `change-notice`, `audit-drift`, `cli`. */
  reason: z.string().check(z.minLength(1), z.maxLength(256)),
  /** Who asked: a function name, `forwarder`, `spiritctl`, ... */
  requestedBy: z.string().check(z.minLength(1), z.maxLength(128)),
});

export type ReconcileRequest = z.infer<typeof reconcileRequestDetailSchema>;

export const reconcileRequestRouting = {
  source: RECONCILER_SOURCE,
  detailType: RECONCILE_REQUEST_DETAIL_TYPE,
} as const;

/** A whole EventBridge event carrying a reconcile request, as a target receives it. */
export const reconcileRequestEventSchema = z.extend(eventEnvelopeSchema(reconcileRequestDetailSchema), {
  source: z.literal(RECONCILER_SOURCE),
  'detail-type': z.literal(RECONCILE_REQUEST_DETAIL_TYPE),
});
export type ReconcileRequestEvent = z.infer<typeof reconcileRequestEventSchema>;
