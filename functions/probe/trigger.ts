/**
 * What the `probe` function accepts: the schedule's tick (fan out one probe request per registered cluster), a
 * probe request naming one cluster (the fan-out's, or an operator's), or — for a direct invoke —
 * `{ "clusterId": … }`.
 */

import { EventValidationError, eventEnvelopeSchema, parseEvent } from '../../events/envelope.ts';
import {
  leaderProbeRequestDetailSchema,
  leaderProbeRequestEventSchema,
  leaderProbeRunIdSchema,
} from '../../events/leader-probe-request.ts';
import {
  LEADER_PROBE_REQUEST_DETAIL_TYPE,
  SCHEDULED_EVENT_DETAIL_TYPE,
  SCHEDULED_EVENT_SOURCE,
} from '../../events/source.ts';
import * as z from '../../shared/zod.ts';

const scheduledEventSchema = z.extend(eventEnvelopeSchema(z.record(z.string(), z.unknown())), {
  source: z.literal(SCHEDULED_EVENT_SOURCE),
  'detail-type': z.literal(SCHEDULED_EVENT_DETAIL_TYPE),
  // The tick's id names the run its probe requests carry.
  id: leaderProbeRunIdSchema,
});
const directSchema = z.strictObject({ clusterId: leaderProbeRequestDetailSchema.shape.clusterId });

/**
 * A parsed trigger: the tick (`all`, its id the run's) or one cluster, with where its id was read from (so an
 * unregistered one is named by that field) and the run and requester a probe request may carry.
 */
export type ProbeTrigger =
  | { scope: 'all'; runId: string }
  | {
      scope: 'cluster';
      clusterId: string;
      field: 'detail.clusterId' | 'clusterId';
      runId?: string;
      requestedBy?: string;
    };

/** Only the detail-type, if any; every other field passes through for the schema picked by it. */
const routing = z.looseObject({ 'detail-type': z.optional(z.string()) });

export function parseProbeTrigger(raw: unknown): ProbeTrigger {
  const value = typeof raw === 'string' ? parseEvent(z.unknown(), raw) : raw;
  const { 'detail-type': detailType } = parseEvent(routing, value ?? {});
  if (detailType === SCHEDULED_EVENT_DETAIL_TYPE) {
    return { scope: 'all', runId: parseEvent(scheduledEventSchema, value).id };
  }
  if (detailType === LEADER_PROBE_REQUEST_DETAIL_TYPE) {
    const { detail } = parseEvent(leaderProbeRequestEventSchema, value);
    return { scope: 'cluster', field: 'detail.clusterId', ...detail };
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
  return { scope: 'cluster', field: 'clusterId', clusterId: parseEvent(directSchema, value).clusterId };
}

const ENVELOPE_FIELDS = ['version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'resources', 'detail'];

function looksLikeEnvelope(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ENVELOPE_FIELDS.some((k) => k in value);
}
