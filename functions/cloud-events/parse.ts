/** Which EC2 events mean "this node is going away", and the instance and cluster they name. */

import {
  EC2_LEAVING_STATES,
  EC2_SPOT_INTERRUPTION_DETAIL_TYPE,
  EC2_STATE_CHANGE_DETAIL_TYPE,
  ec2SpotInterruptionEventSchema,
  ec2StateChangeEventSchema,
  parseEvent,
} from '../../events/index.ts';
import * as z from '../../shared/zod.ts';

export interface InstanceLeaving {
  eventId: string;
  instanceId: string;
  /** `stopping`, `terminated`, ... or `spot-interruption`. */
  why: string;
  clusterId?: string;
}

const detailTypeOnly = z.object({
  'detail-type': z.enum([EC2_STATE_CHANGE_DETAIL_TYPE, EC2_SPOT_INTERRUPTION_DETAIL_TYPE]),
});

/** The leaving instance, or undefined for a state that is not leaving (`pending`, `running`). */
export function parseCloudEvent(raw: unknown): InstanceLeaving | undefined {
  const { 'detail-type': detailType } = parseEvent(detailTypeOnly, raw);
  if (detailType === EC2_SPOT_INTERRUPTION_DETAIL_TYPE) {
    const event = parseEvent(ec2SpotInterruptionEventSchema, raw);
    return {
      eventId: event.id,
      instanceId: event.detail['instance-id'],
      why: 'spot-interruption',
      clusterId: event.detail.clusterId,
    };
  }
  const event = parseEvent(ec2StateChangeEventSchema, raw);
  if (!(EC2_LEAVING_STATES as readonly string[]).includes(event.detail.state)) return undefined;
  return {
    eventId: event.id,
    instanceId: event.detail['instance-id'],
    why: event.detail.state,
    clusterId: event.detail.clusterId,
  };
}

/** Whether a Node's spec.providerID names the instance: `aws:///eu-west-1a/i-0abc...` ends with `/i-0abc...`. */
export function providerIdNames(providerId: unknown, instanceId: string): boolean {
  return typeof providerId === 'string' && providerId.endsWith(`/${instanceId}`);
}
