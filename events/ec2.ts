import { z } from 'zod';
import { eventEnvelopeSchema } from './envelope.ts';
import { EC2_SOURCE, EC2_SPOT_INTERRUPTION_DETAIL_TYPE, EC2_STATE_CHANGE_DETAIL_TYPE } from './source.ts';

/**
 * The EC2 events the cloud-events function acts on, as AWS sends them (see "EC2 instance state-change
 * notification" and "EC2 Spot Instance interruption notices" in the EC2 user guide). Unknown fields are
 * kept out (stripped), so new fields AWS adds never break parsing.
 */
const instanceId = z.string().regex(/^i-[0-9a-f]{8,17}$/, 'expected an EC2 instance id such as i-0abcd1234ef567890');

/**
 * Optional: the registered cluster the instance belongs to, when an enrichment step (for example an
 * EventBridge Pipe reading the instance's `kubernetes.io/cluster/<name>` tag) put it on the event.
 * Without it every registered cluster is searched.
 */
const clusterHint = z.string().min(1).max(128).optional();

/** States after which the node is gone or going: its pool-spirit must move. */
export const EC2_LEAVING_STATES = ['stopping', 'stopped', 'shutting-down', 'terminated'] as const;

export const ec2StateChangeDetailSchema = z.object({
  'instance-id': instanceId,
  state: z.string().min(1),
  clusterId: clusterHint,
});

export const ec2SpotInterruptionDetailSchema = z.object({
  'instance-id': instanceId,
  'instance-action': z.string().min(1),
  clusterId: clusterHint,
});

export const ec2StateChangeEventSchema = eventEnvelopeSchema(ec2StateChangeDetailSchema).extend({
  source: z.literal(EC2_SOURCE),
  'detail-type': z.literal(EC2_STATE_CHANGE_DETAIL_TYPE),
});
export const ec2SpotInterruptionEventSchema = eventEnvelopeSchema(ec2SpotInterruptionDetailSchema).extend({
  source: z.literal(EC2_SOURCE),
  'detail-type': z.literal(EC2_SPOT_INTERRUPTION_DETAIL_TYPE),
});
export type Ec2StateChangeEvent = z.infer<typeof ec2StateChangeEventSchema>;
export type Ec2SpotInterruptionEvent = z.infer<typeof ec2SpotInterruptionEventSchema>;
