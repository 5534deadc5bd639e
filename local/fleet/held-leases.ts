/**
 * A resumed fleet asks for a reconcile of every pool whose lease is held in the kept table.
 *
 * A stack restart is a kill: the invocations running then are gone, and so are the bus's deliveries waiting
 * for a retry (in the cloud, Lambda's retry queue is durable, so a killed invocation's event comes back). A
 * lease one of them held is then taken over only if a later event names its pool. The resumed forwarders'
 * resync names every pool that still exists, but nothing names one deleted meanwhile: its item would keep
 * the dead lease, and no TTL, for good (found by the chaos soak). No invocation survives a restart, so every
 * lease held at start-up is a dead one; one Reconcile Request each stands in for the event the kill lost. It
 * is requeued until the lease lapses, then reconciles the pool or finds it gone.
 */
import { LEASE_OWNER, keys, prefixes, queryAll, SORT_KEY, POOL_PREFIX } from '../../adapters/state-table/index.ts';
import type { StateTable } from '../../adapters/state-table/index.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../events/index.ts';
import type { ReconcileRequest } from '../../events/index.ts';
import type { LocalBus } from '../bus/index.ts';

/** PutEvents takes at most this many entries per call. */
const PUT_EVENTS_BATCH = 10;

/** The (cluster, pool) keys whose lease is held in the table, for the given clusters. */
export async function heldLeases(
  table: StateTable,
  clusterIds: string[],
): Promise<{ clusterId: string; nodePool: string }[]> {
  const held: { clusterId: string; nodePool: string }[] = [];
  for (const clusterId of clusterIds) {
    const items = await queryAll(table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.pool(clusterId, 'x').pk, ':prefix': prefixes.pools },
    });
    for (const item of items) {
      if (item[LEASE_OWNER] !== undefined)
        held.push({ clusterId, nodePool: String(item[SORT_KEY]).slice(POOL_PREFIX.length) });
    }
  }
  return held;
}

/** Puts one Reconcile Request per held lease of the given (resumed) clusters; returns how many. */
export async function requestHeldLeases(
  table: StateTable,
  clusterIds: string[],
  bus: Pick<LocalBus, 'putEvents'>,
  eventBusName: string,
): Promise<number> {
  const held = await heldLeases(table, clusterIds);
  for (let i = 0; i < held.length; i += PUT_EVENTS_BATCH) {
    bus.putEvents(
      held.slice(i, i + PUT_EVENTS_BATCH).map(({ clusterId, nodePool }) => {
        const detail: ReconcileRequest = {
          clusterId,
          nodePool,
          reason: 'lease left by an invocation killed with the stack',
          requestedBy: 'local-stack',
        };
        return {
          Source: RECONCILER_SOURCE,
          DetailType: RECONCILE_REQUEST_DETAIL_TYPE,
          EventBusName: eventBusName,
          Detail: JSON.stringify(detail),
        };
      }),
    );
  }
  return held.length;
}
