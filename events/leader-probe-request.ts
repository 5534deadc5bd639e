import * as z from '../shared/zod.ts';
import { eventEnvelopeSchema } from './envelope.ts';
import { LEADER_PROBE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from './source.ts';

/**
 * The scheduled tick that asked (the schedule event's id): ties one run's invocations together in the logs.
 * The probe function reads a schedule event's id with it too, so a tick whose id could not be sent is refused
 * there, naming `id`.
 */
export const leaderProbeRunIdSchema = z.string().check(z.minLength(1), z.maxLength(200));

/**
 * Asks the probe function to probe the leader elections of one registered cluster's pools now. The scheduled
 * probe fans out one per cluster, so each cluster is probed in its own invocation and a slow or unreachable
 * one delays (and retries) only its own probe. Only `clusterId` is required: an operator's request (aws events
 * put-events) may send just that. Unknown fields are stripped, not rejected, so senders may add fields.
 */
export const leaderProbeRequestDetailSchema = z.object({
  clusterId: z
    .string()
    .check(z.regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'expected a registered cluster id (a DNS label)')),
  runId: z.optional(leaderProbeRunIdSchema),
  /** Who asked: `schedule`, an operator, ... */
  requestedBy: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
});
export type LeaderProbeRequest = z.infer<typeof leaderProbeRequestDetailSchema>;

export const leaderProbeRequestRouting = {
  source: RECONCILER_SOURCE,
  detailType: LEADER_PROBE_REQUEST_DETAIL_TYPE,
} as const;

/** A whole EventBridge event carrying a leader probe request, as the probe function receives it. */
export const leaderProbeRequestEventSchema = z.extend(eventEnvelopeSchema(leaderProbeRequestDetailSchema), {
  source: z.literal(RECONCILER_SOURCE),
  'detail-type': z.literal(LEADER_PROBE_REQUEST_DETAIL_TYPE),
});
export type LeaderProbeRequestEvent = z.infer<typeof leaderProbeRequestEventSchema>;
