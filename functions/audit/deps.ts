/**
 * Everything the audit function talks to. Like reconcile/deps.ts: the Lambda entry point builds it from the
 * environment; the local fleet, `spiritctl audit` and tests build it with local endpoints and pass it to the
 * same handler factory.
 */

import { AUDIT_RETENTION_MS } from '../../adapters/state-table/index.ts';
import { type AuditThresholds, DEFAULT_AUDIT_HEARTBEAT_MS } from '../../core/audit/index.ts';
import type { FleetDefaults } from '../../core/nodepool.ts';
import type { KeyFactory } from '../../core/render/keys.ts';
import { webCryptoKeyFactory } from '../../core/render/keys.ts';
import { DEFAULT_EVENT_BUS } from '../../events/index.ts';
import {
  cloudEventsFromEnvironment,
  cloudTableFromEnvironment,
  type FleetFunctionDeps,
  fleetFunctionDeps,
} from '../common/fleet-deps.ts';
import type { EventSender } from '../common/send-events.ts';

export const AUDIT_SERVICE_NAME = 'pool-spirit-audit';
export const METRICS_NAMESPACE = 'PoolSpirit';

export interface AuditDeps extends FleetFunctionDeps {
  /** Where audit requests and reconcile requests go (PutEvents). Undefined: nothing is sent (report only). */
  events?: EventSender;
  eventBusName: string;
  fleetDefaults: FleetDefaults;
  /** Renders the desired PKI when a Secret is missing (the drift check needs something to compare). */
  keyFactory: KeyFactory;
  thresholds?: Partial<AuditThresholds>;
  /** How far back the fleet report's charts reach (the audit itself reads back over the flapping window). */
  historyWindowMs: number;
  /** A cluster's full record is written at least this often, even when nothing changed (core/audit/audit-record.ts). */
  auditHeartbeatMs: number;
  namespace?: string;
  /** Clusters audited at once by `auditNow` (the CLI). */
  concurrency: number;
}

export type AuditDepsInput = Partial<AuditDeps> & Pick<AuditDeps, 'table'>;

export function auditDeps(input: AuditDepsInput): AuditDeps {
  const clock = input.clock ?? (() => new Date());
  const deps: AuditDeps = {
    ...fleetFunctionDeps(input.table, AUDIT_SERVICE_NAME, clock, 'pool-spirit-reconciler'),
    eventBusName: DEFAULT_EVENT_BUS,
    fleetDefaults: {},
    keyFactory: webCryptoKeyFactory(),
    historyWindowMs: 24 * 3600 * 1000,
    auditHeartbeatMs: DEFAULT_AUDIT_HEARTBEAT_MS,
    concurrency: 8,
    ...input,
    clock,
  };
  // An unchanged cluster's full record is rewritten only by the heartbeat: one rarer than the retention would
  // let the record expire while notes still name it.
  if (!(deps.auditHeartbeatMs > 0 && deps.auditHeartbeatMs < AUDIT_RETENTION_MS))
    throw new RangeError(
      `auditHeartbeatMs: must be positive and shorter than the records' retention (${AUDIT_RETENTION_MS} ms), got ${deps.auditHeartbeatMs} ms`,
    );
  return deps;
}

/** The cloud wiring: STATE_TABLE_NAME and EVENT_BUS_NAME (functions/common/fleet-deps.ts). */
export function auditDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): AuditDeps {
  return auditDeps({ ...cloudTableFromEnvironment(env), ...cloudEventsFromEnvironment(env) });
}
