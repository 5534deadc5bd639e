/**
 * Everything the probe function talks to. Built from the environment in the cloud; the local stack and
 * tests pass their own table, clock and cluster access to the same handler factory.
 */

import { DEFAULT_PROBE_RETENTION_MS } from '../../adapters/state-table/index.ts';
import type { LeaderThresholds } from '../../core/leader/index.ts';
import { DEFAULT_LEADER_THRESHOLDS, DEFAULT_PROBE_HEARTBEAT_MS } from '../../core/leader/index.ts';
import { DEFAULT_EVENT_BUS } from '../../events/index.ts';
import {
  cloudEventsFromEnvironment,
  cloudTableFromEnvironment,
  type FleetFunctionDeps,
  fleetFunctionDeps,
} from '../common/fleet-deps.ts';
import type { EventSender } from '../common/send-events.ts';

export const SERVICE_NAME = 'pool-spirit-probe';
export const METRICS_NAMESPACE = 'PoolSpirit';

/**
 * The agent reports the Lease into the PoolSpirit status periodically, so the probe gives a renewTime
 * 45 s of grace on top of the 15 s lease: stale after 60 s, the same line core/status.ts draws for the
 * LeaderElected condition (a pool must not be "stale" here and "Elected" on its own status).
 */
export const PROBE_LEADER_THRESHOLDS: LeaderThresholds = { ...DEFAULT_LEADER_THRESHOLDS, staleGraceSeconds: 45 };

export interface ProbeDeps extends FleetFunctionDeps {
  /**
   * Where the scheduled fan-out sends one Leader Probe Request per cluster (PutEvents). Undefined: a tick
   * cannot be fanned out (it fails, naming this); a request for one cluster is probed all the same.
   */
  events?: EventSender;
  eventBusName: string;
  thresholds: LeaderThresholds;
  /** How long observations are kept (TTL). */
  retentionMs: number;
  /** The longest a pool goes without a write while nothing changes (core/leader/probe-record.ts). */
  heartbeatMs: number;
}

export type ProbeDepsInput = Partial<ProbeDeps> & Pick<ProbeDeps, 'table'>;

export function probeDeps(input: ProbeDepsInput): ProbeDeps {
  const clock = input.clock ?? (() => new Date());
  const deps: ProbeDeps = {
    ...fleetFunctionDeps(input.table, SERVICE_NAME, clock),
    eventBusName: DEFAULT_EVENT_BUS,
    thresholds: PROBE_LEADER_THRESHOLDS,
    retentionMs: DEFAULT_PROBE_RETENTION_MS,
    heartbeatMs: DEFAULT_PROBE_HEARTBEAT_MS,
    ...input,
    clock,
  };
  // A pool that never changes is written only by its heartbeat: a heartbeat rarer than the retention
  // would let a live pool's records expire between two writes.
  if (!(deps.heartbeatMs < deps.retentionMs))
    throw new RangeError(
      `heartbeatMs: must be shorter than retentionMs (${deps.retentionMs} ms), got ${deps.heartbeatMs} ms`,
    );
  return deps;
}

/** Cloud wiring: STATE_TABLE_NAME, cluster access and EVENT_BUS_NAME (functions/common/fleet-deps.ts). */
export function probeDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): ProbeDeps {
  return probeDeps({ ...cloudTableFromEnvironment(env), ...cloudEventsFromEnvironment(env) });
}
