/**
 * What the reconcile function accepts: a reconcile request (from the audit, the CLI, another function) or
 * a change notice from a cluster's forwarder. Either only *names* a (cluster, NodePool) key: the function
 * is level-triggered and reads the current state itself.
 */

import { keys } from '../../adapters/state-table/keys.ts';
import { TerminalError } from '../../core/outcome.ts';
import {
  CHANGE_NOTICE_DETAIL_TYPE,
  changeNoticeEventSchema,
  EventValidationError,
  parseEvent,
  RECONCILE_REQUEST_DETAIL_TYPE,
  reconcileRequestEventSchema,
} from '../../events/index.ts';
import * as z from '../../shared/zod.ts';

export type ReconcileTrigger = z.infer<typeof reconcileRequestEventSchema> | z.infer<typeof changeNoticeEventSchema>;

export interface ReconcileTarget {
  clusterId: string;
  nodePool: string;
  /** EventBridge event id: the dedupe key. */
  eventId: string;
  /**
   * When the bus accepted the event (its `time`, epoch ms): a pass that took the pool's lease well after it
   * has served it (docs/decisions/0026-notices-served-by-a-later-pass.md).
   */
  acceptedAt: number;
  reason: string;
}

const detailTypeOnly = z.object({ 'detail-type': z.enum([RECONCILE_REQUEST_DETAIL_TYPE, CHANGE_NOTICE_DETAIL_TYPE]) });

export function parseTrigger(raw: unknown): ReconcileTarget {
  // Pick the schema by detail-type first, so errors name the fields of the event actually sent.
  const { 'detail-type': detailType } = parseEvent(detailTypeOnly, raw);
  if (detailType === RECONCILE_REQUEST_DETAIL_TYPE) {
    const event = parseEvent(reconcileRequestEventSchema, raw);
    const { clusterId, nodePool, reason } = event.detail;
    return keyable(
      { clusterId, nodePool, eventId: event.id, acceptedAt: Date.parse(event.time), reason },
      'detail.nodePool',
    );
  }
  const event = parseEvent(changeNoticeEventSchema, raw);
  const notice = event.detail;
  const nodePool = notice.poolName ?? (notice.kind === 'NodePool' ? notice.name : undefined);
  if (!nodePool) {
    throw new EventValidationError([
      {
        path: 'detail.poolName',
        message: `required for a ${notice.kind} change notice (names the NodePool to reconcile)`,
      },
    ]);
  }
  return keyable(
    {
      clusterId: notice.clusterId,
      nodePool,
      eventId: event.id,
      acceptedAt: Date.parse(event.time),
      reason: `change-notice:${notice.kind}:${notice.changeType}`,
    },
    notice.poolName !== undefined ? 'detail.poolName' : 'detail.name',
  );
}

/**
 * The schemas take any short string, but the target becomes state-table keys (DNS-name-like, no `#`): reject
 * what cannot be keyed here, naming the event's field, instead of failing later inside the reconcile.
 */
function keyable(target: ReconcileTarget, nodePoolPath: string): ReconcileTarget {
  const checks: [string, () => unknown][] = [
    ['detail.clusterId', () => keys.cluster(target.clusterId)],
    [nodePoolPath, () => keys.pool('x', target.nodePool)],
    ['id', () => keys.event(target.eventId)],
  ];
  const issues: { path: string; message: string }[] = [];
  for (const [path, check] of checks) {
    try {
      check();
    } catch (err) {
      issues.push({ path, message: (err as Error).message.replace(/^[^:]+: /, '') });
    }
  }
  const [first] = issues;
  if (first) {
    throw new TerminalError({
      kind: 'unkeyable-name',
      field: first.path,
      message: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
    });
  }
  return target;
}
