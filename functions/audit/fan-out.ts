/**
 * The scheduled half of the audit: one audit request per registered cluster, so clusters are audited in
 * parallel invocations and a slow one delays only itself. The run item names the clusters asked.
 */
import { randomUUID } from 'node:crypto';
import { putAuditRun } from '../../adapters/state-table/index.ts';
import type { AuditRequest } from '../../events/index.ts';
import { auditRequestDetailSchema, auditRequestRouting, toPutEventsEntry } from '../../events/index.ts';
import { sendEntries } from '../common/send-events.ts';
import type { AuditDeps } from './deps.ts';

export interface FanOutResult {
  runId: string;
  requestedAt: string;
  clusters: string[];
  putEventsCalls: number;
}

/** `runId`: the scheduled event's id, so a repeated delivery of one schedule tick is the same run. */
export async function fanOutAudit(
  deps: AuditDeps,
  options: { runId?: string; at?: Date; requestedBy: string },
): Promise<FanOutResult> {
  if (!deps.events) throw new Error('the audit fan-out needs an event sender (EVENT_BUS_NAME)');
  const at = (options.at ?? deps.clock()).toISOString();
  const runId = options.runId ?? randomUUID();
  const clusters = (await deps.clusters()).map((c) => c.id).sort();
  await putAuditRun(deps.table, { runId, at, requestedBy: options.requestedBy, clusters }, deps.clock());
  const entries = clusters.map((clusterId) =>
    toPutEventsEntry(
      auditRequestRouting,
      auditRequestDetailSchema,
      { clusterId, runId, requestedAt: at, requestedBy: options.requestedBy } satisfies AuditRequest,
      { eventBusName: deps.eventBusName },
    ),
  );
  const sent = await sendEntries(deps.events, entries);
  deps.logger.info('audit fanned out', { runId, clusters: clusters.length, putEventsCalls: sent.calls });
  return { runId, requestedAt: at, clusters, putEventsCalls: sent.calls };
}
