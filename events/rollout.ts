import * as z from '../shared/zod.ts';
import { eventEnvelopeSchema } from './envelope.ts';
import { RECONCILER_SOURCE, SCHEDULED_EVENT_DETAIL_TYPE, SCHEDULED_EVENT_SOURCE } from './source.ts';

/**
 * What the `rollout` function takes: an operator command (start, pause, resume, abort, rollback) or a
 * tick (the schedule rule's, or one naming a rollout). Shape only: the rollout's own rules (limits,
 * durations, the patch) are checked by core/rollout's parseRolloutSpec, which names the field at fault.
 * Commands are invoked directly (spiritctl, the Lambda Invoke API) or routed as a `Rollout Command` event.
 */
export const ROLLOUT_COMMAND_DETAIL_TYPE = 'Rollout Command';
export const rolloutCommandRouting = { source: RECONCILER_SOURCE, detailType: ROLLOUT_COMMAND_DETAIL_TYPE } as const;

const rolloutId = z
  .string()
  .check(z.regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'expected a rollout id (a DNS label)'));
const requestedBy = z.optional(z.string().check(z.minLength(1), z.maxLength(128)));
/** A count or a percentage (`"25%"`); parseRolloutSpec checks the value. */
const countOrText = z.union([z.string(), z.int()]);
/** A duration (`"5m"`) or milliseconds. */
const durationOrMs = z.union([z.string(), z.int().check(z.gte(0))]);

export const rolloutStartInputSchema = z.strictObject({
  id: z.optional(rolloutId),
  version: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
  patch: z.optional(z.record(z.string(), z.unknown())),
  selector: z.optional(z.record(z.string(), z.string())),
  canary: z.optional(
    z.union([z.array(z.string().check(z.minLength(1))).check(z.minLength(1)), z.int().check(z.gte(1))]),
  ),
  maxConcurrency: z.optional(countOrText),
  maxFailures: z.optional(countOrText),
  soak: z.optional(durationOrMs),
  progressDeadline: z.optional(durationOrMs),
  autoRollback: z.optional(z.boolean()),
});
export type RolloutStartInput = z.infer<typeof rolloutStartInputSchema>;

export const rolloutCommandDetailSchema = z.discriminatedUnion('command', [
  z.strictObject({ command: z.literal('start'), rollout: rolloutStartInputSchema, requestedBy }),
  z.strictObject({ command: z.enum(['pause', 'resume', 'abort', 'rollback']), rolloutId, requestedBy }),
  /** Without a rollout id: every active rollout. */
  z.strictObject({ command: z.literal('tick'), rolloutId: z.optional(rolloutId), requestedBy }),
]);
export type RolloutCommandDetail = z.infer<typeof rolloutCommandDetailSchema>;

export const rolloutCommandEventSchema = z.extend(eventEnvelopeSchema(rolloutCommandDetailSchema), {
  'detail-type': z.literal(ROLLOUT_COMMAND_DETAIL_TYPE),
});

/** The schedule rule's event: a tick of every active rollout. */
export const rolloutScheduleEventSchema = z.extend(eventEnvelopeSchema(z.record(z.string(), z.unknown())), {
  source: z.literal(SCHEDULED_EVENT_SOURCE),
  'detail-type': z.literal(SCHEDULED_EVENT_DETAIL_TYPE),
});
