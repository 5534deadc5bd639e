import { z } from 'zod';
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

const rolloutId = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'expected a rollout id (a DNS label)');
const requestedBy = z.string().min(1).max(128).optional();

export const rolloutStartInputSchema = z.strictObject({
  id: rolloutId.optional(),
  version: z.string().min(1).max(128).optional(),
  patch: z.record(z.string(), z.unknown()).optional(),
  selector: z.record(z.string(), z.string()).optional(),
  canary: z.union([z.array(z.string().min(1)).min(1), z.int().min(1)]).optional(),
  maxConcurrency: z.union([z.string(), z.int()]).optional(),
  maxFailures: z.union([z.string(), z.int()]).optional(),
  soak: z.union([z.string(), z.int().min(0)]).optional(),
  progressDeadline: z.union([z.string(), z.int().min(0)]).optional(),
  autoRollback: z.boolean().optional(),
});
export type RolloutStartInput = z.infer<typeof rolloutStartInputSchema>;

export const rolloutCommandDetailSchema = z.discriminatedUnion('command', [
  z.strictObject({ command: z.literal('start'), rollout: rolloutStartInputSchema, requestedBy }),
  z.strictObject({ command: z.enum(['pause', 'resume', 'abort', 'rollback']), rolloutId, requestedBy }),
  /** Without a rollout id: every active rollout. */
  z.strictObject({ command: z.literal('tick'), rolloutId: rolloutId.optional(), requestedBy }),
]);
export type RolloutCommandDetail = z.infer<typeof rolloutCommandDetailSchema>;

export const rolloutCommandEventSchema = eventEnvelopeSchema(rolloutCommandDetailSchema).extend({
  'detail-type': z.literal(ROLLOUT_COMMAND_DETAIL_TYPE),
});

/** The schedule rule's event: a tick of every active rollout. */
export const rolloutScheduleEventSchema = eventEnvelopeSchema(z.record(z.string(), z.unknown())).extend({
  source: z.literal(SCHEDULED_EVENT_SOURCE),
  'detail-type': z.literal(SCHEDULED_EVENT_DETAIL_TYPE),
});
