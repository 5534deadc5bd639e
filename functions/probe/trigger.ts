/**
 * What the `probe` function accepts: the schedule's tick (probe every registered cluster), a probe request
 * naming one cluster (from the CLI or another function), or — for a direct invoke — `{ "clusterId": … }`.
 */

import { EventValidationError, eventEnvelopeSchema, parseEvent } from '../../events/envelope.ts';
import { leaderProbeRequestDetailSchema, leaderProbeRequestEventSchema } from '../../events/leader-probe-request.ts';
import {
  LEADER_PROBE_REQUEST_DETAIL_TYPE,
  SCHEDULED_EVENT_DETAIL_TYPE,
  SCHEDULED_EVENT_SOURCE,
} from '../../events/source.ts';
import * as z from '../../shared/zod.ts';

/** `detail-type` of a request to probe one cluster's leader elections now. */
export { LEADER_PROBE_REQUEST_DETAIL_TYPE };

const scheduledEventSchema = z.extend(eventEnvelopeSchema(z.record(z.string(), z.unknown())), {
  source: z.literal(SCHEDULED_EVENT_SOURCE),
  'detail-type': z.literal(SCHEDULED_EVENT_DETAIL_TYPE),
});
const directSchema = z.strictObject({ clusterId: leaderProbeRequestDetailSchema.shape.clusterId });

/** `all`: every registered cluster; otherwise the one named. */
export type ProbeTarget = { scope: 'all' } | { scope: 'cluster'; clusterId: string };

/** Only the detail-type, if any; every other field passes through for the schema picked by it. */
const routing = z.looseObject({ 'detail-type': z.optional(z.string()) });

export function parseProbeTrigger(raw: unknown): ProbeTarget {
  const value = typeof raw === 'string' ? parseEvent(z.unknown(), raw) : raw;
  const { 'detail-type': detailType } = parseEvent(routing, value ?? {});
  if (detailType === SCHEDULED_EVENT_DETAIL_TYPE) {
    parseEvent(scheduledEventSchema, value);
    return { scope: 'all' };
  }
  if (detailType === LEADER_PROBE_REQUEST_DETAIL_TYPE) {
    return { scope: 'cluster', clusterId: parseEvent(leaderProbeRequestEventSchema, value).detail.clusterId };
  }
  // An EventBridge event without its detail-type is not a direct invoke: say what is missing, not which
  // envelope fields a direct invoke does not take.
  if (detailType !== undefined || looksLikeEnvelope(value)) {
    throw new EventValidationError([
      {
        path: 'detail-type',
        message: `expected "${SCHEDULED_EVENT_DETAIL_TYPE}" or "${LEADER_PROBE_REQUEST_DETAIL_TYPE}", got ${JSON.stringify(detailType) ?? 'nothing'}`,
      },
    ]);
  }
  return { scope: 'cluster', clusterId: parseEvent(directSchema, value).clusterId };
}

const ENVELOPE_FIELDS = ['version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'resources', 'detail'];

function looksLikeEnvelope(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ENVELOPE_FIELDS.some((k) => k in value);
}
