/**
 * Lambda entry point of `audit`. Two triggers, told apart by detail-type:
 *  - the schedule rule (`Scheduled Event` from aws.events): fan out one audit request per registered cluster;
 *  - an audit request: audit that cluster, store the record (30-day TTL), request reconciles for fixable
 *    findings.
 * The work is in audit/*.ts; `spiritctl audit` and tests call the same functions through this factory.
 */

import {
  AUDIT_REQUEST_DETAIL_TYPE,
  anyEventEnvelopeSchema,
  auditRequestEventSchema,
  EventValidationError,
  parseEvent,
  SCHEDULED_EVENT_DETAIL_TYPE,
  SCHEDULED_EVENT_SOURCE,
} from '../../events/index.ts';
import * as z from '../../shared/zod.ts';
import { type LambdaHandler, observedHandler, type WithoutDeadLetters } from '../common/observed-handler.ts';
import type { TerminalResult } from '../common/terminal.ts';
import { unknownCluster } from '../common/terminal.ts';
import type { ClusterAuditResult } from './cluster-audit.ts';
import { auditOneCluster } from './cluster-audit.ts';
import type { AuditDeps, AuditDepsInput } from './deps.ts';
import { auditDeps, auditDepsFromEnvironment } from './deps.ts';
import type { FanOutResult } from './fan-out.ts';
import { fanOutAudit } from './fan-out.ts';

export type { ClusterAuditResult } from './cluster-audit.ts';
export type { AuditDeps, AuditDepsInput } from './deps.ts';
export { auditDeps } from './deps.ts';
export type { FanOutResult } from './fan-out.ts';
export { auditNow, fleetReportFromTable } from './report.ts';

export type AuditResult = ({ kind: 'fan-out' } & FanOutResult) | ({ kind: 'cluster' } & ClusterAuditResult);

const triggerSchema = z.extend(anyEventEnvelopeSchema, {
  'detail-type': z.enum([SCHEDULED_EVENT_DETAIL_TYPE, AUDIT_REQUEST_DETAIL_TYPE]),
});

/** Without a dead-letter sink (the CLI, tests) input that can never succeed is thrown, not returned. */
export function createAuditHandler(input: WithoutDeadLetters<AuditDeps | AuditDepsInput>): LambdaHandler<AuditResult>;
export function createAuditHandler(
  input: AuditDeps | AuditDepsInput | (() => AuditDeps),
): LambdaHandler<AuditResult | TerminalResult>;
export function createAuditHandler(
  input: AuditDeps | AuditDepsInput | (() => AuditDeps),
): LambdaHandler<AuditResult | TerminalResult> {
  let resolved: AuditDeps | undefined;
  const deps = () => (resolved ??= typeof input === 'function' ? input() : auditDeps(input));
  return observedHandler('audit', deps, async (d, event): Promise<AuditResult> => {
    const trigger = parseEvent(triggerSchema, event);
    if (trigger['detail-type'] === SCHEDULED_EVENT_DETAIL_TYPE) {
      if (trigger.source !== SCHEDULED_EVENT_SOURCE) {
        throw new EventValidationError([
          {
            path: 'source',
            message: `a Scheduled Event must come from ${SCHEDULED_EVENT_SOURCE}, got ${JSON.stringify(trigger.source)}`,
          },
        ]);
      }
      return {
        kind: 'fan-out',
        ...(await fanOutAudit(d, { runId: trigger.id, at: new Date(trigger.time), requestedBy: 'schedule' })),
      };
    }
    const request = parseEvent(auditRequestEventSchema, event).detail;
    d.logger.appendKeys({ clusterId: request.clusterId, runId: request.runId });
    // Metadata, not a dimension: each clusterId value would be a custom metric series of its own ($0.30 a
    // month each, 4 per function per cluster: most of the fleet's bill, docs/cost.md); in the EMF document
    // it still lets CloudWatch Logs Insights break a metric down by cluster.
    d.metrics.addMetadata('clusterId', request.clusterId);
    // An audit of a cluster nobody registered would store a record of a cluster that does not exist.
    if (!(await d.cluster(request.clusterId))) throw unknownCluster(request.clusterId, 'detail.clusterId');
    return { kind: 'cluster', ...(await auditOneCluster(d, request)) };
  });
}

/** The cloud handler: dependencies from the function's environment, built on the first invocation. */
export const handler = createAuditHandler(() => auditDepsFromEnvironment());
