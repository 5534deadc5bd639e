import { z } from 'zod';
import { eventEnvelopeSchema } from './envelope.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from './source.ts';

/**
 * Asks for one (cluster, NodePool) key to be reconciled. Level-triggered: the request only names the key,
 * the reconcile function reads current state itself. Unknown fields are stripped, not rejected, so senders
 * may add fields without breaking older receivers.
 */
export const reconcileRequestDetailSchema = z.object({
  clusterId: z.string().min(1).max(128),
  nodePool: z.string().min(1).max(253),
  /** Why the reconcile was asked for, e.g. `change-notice`, `audit-drift`, `cli`. */
  reason: z.string().min(1).max(256),
  /** Who asked: a function name, `forwarder`, `spiritctl`, ... */
  requestedBy: z.string().min(1).max(128),
});

export type ReconcileRequest = z.infer<typeof reconcileRequestDetailSchema>;

export const reconcileRequestRouting = { source: RECONCILER_SOURCE, detailType: RECONCILE_REQUEST_DETAIL_TYPE } as const;

/** A whole EventBridge event carrying a reconcile request, as a target receives it. */
export const reconcileRequestEventSchema = eventEnvelopeSchema(reconcileRequestDetailSchema).extend({
  source: z.literal(RECONCILER_SOURCE),
  'detail-type': z.literal(RECONCILE_REQUEST_DETAIL_TYPE),
});
export type ReconcileRequestEvent = z.infer<typeof reconcileRequestEventSchema>;
