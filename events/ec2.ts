import * as z from '../shared/zod.ts';
import { eventEnvelopeSchema } from './envelope.ts';
import { EC2_SOURCE, EC2_SPOT_INTERRUPTION_DETAIL_TYPE, EC2_STATE_CHANGE_DETAIL_TYPE } from './source.ts';

/**
 * The EC2 events the cloud-events function acts on, as AWS sends them (see "EC2 instance state-change
 * notification" and "EC2 Spot Instance interruption notices" in the EC2 user guide). Unknown fields are
 * kept out (stripped), so new fields AWS adds never break parsing.
 */
const instanceId = z
  .string()
  .check(z.regex(/^i-[0-9a-f]{8,17}$/, 'expected an EC2 instance id such as i-0abcd1234ef567890'));

/**
 * Optional: the registered cluster the instance belongs to, when an enrichment step (for example an
 * EventBridge Pipe reading the instance's `kubernetes.io/cluster/<name>` tag) put it on the event.
 * Without it every registered cluster is searched.
 */
const clusterHint = z.optional(z.string().check(z.minLength(1), z.maxLength(128)));

/** States after which the node is gone or going: its pool-spirit must move. */
export const EC2_LEAVING_STATES = ['stopping', 'stopped', 'shutting-down', 'terminated'] as const;

export const ec2StateChangeDetailSchema = z.object({
  'instance-id': instanceId,
  state: z.string().check(z.minLength(1)),
  clusterId: clusterHint,
});

export const ec2SpotInterruptionDetailSchema = z.object({
  'instance-id': instanceId,
  'instance-action': z.string().check(z.minLength(1)),
  clusterId: clusterHint,
});

export const ec2StateChangeEventSchema = z.extend(eventEnvelopeSchema(ec2StateChangeDetailSchema), {
  source: z.literal(EC2_SOURCE),
  'detail-type': z.literal(EC2_STATE_CHANGE_DETAIL_TYPE),
});
export const ec2SpotInterruptionEventSchema = z.extend(eventEnvelopeSchema(ec2SpotInterruptionDetailSchema), {
  source: z.literal(EC2_SOURCE),
  'detail-type': z.literal(EC2_SPOT_INTERRUPTION_DETAIL_TYPE),
});
export type Ec2StateChangeEvent = z.infer<typeof ec2StateChangeEventSchema>;
export type Ec2SpotInterruptionEvent = z.infer<typeof ec2SpotInterruptionEventSchema>;
