/** Everything the cloud-events function talks to (same wiring style as reconcile/deps.ts and audit/deps.ts). */

import { DEFAULT_EVENT_BUS } from '../../events/index.ts';
import {
  cloudEventsFromEnvironment,
  cloudTableFromEnvironment,
  type FleetFunctionDeps,
  fleetFunctionDeps,
} from '../common/fleet-deps.ts';
import type { EventSender } from '../common/send-events.ts';

export const CLOUD_EVENTS_SERVICE_NAME = 'pool-spirit-cloud-events';

export interface CloudEventsDeps extends FleetFunctionDeps {
  events: EventSender;
  eventBusName: string;
  namespace?: string;
  /** Clusters searched at once for the instance's Node. */
  concurrency: number;
}

export type CloudEventsDepsInput = Partial<CloudEventsDeps> & Pick<CloudEventsDeps, 'table' | 'events'>;

export function cloudEventsDeps(input: CloudEventsDepsInput): CloudEventsDeps {
  const clock = input.clock ?? (() => new Date());
  return {
    ...fleetFunctionDeps(input.table, CLOUD_EVENTS_SERVICE_NAME, clock),
    eventBusName: DEFAULT_EVENT_BUS,
    concurrency: 8,
    ...input,
    clock,
  };
}

export function cloudEventsDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): CloudEventsDeps {
  return cloudEventsDeps({ ...cloudTableFromEnvironment(env), ...cloudEventsFromEnvironment(env) });
}
