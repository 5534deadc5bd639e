/**
 * A resumed fleet asks for a reconcile of every pool whose lease is held in the kept table.
 *
 * A stack restart is a kill: the invocations running then are gone, and so are the bus's deliveries waiting
 * for a retry (in the cloud, Lambda's retry queue is durable, so a killed invocation's event comes back). A
 * lease one of them held is then taken over only if a later event names its pool. The resumed forwarders'
 * resync names every pool that still exists, but nothing names one deleted meanwhile: its item would keep
 * the dead lease, and no TTL, for good (found by the chaos soak). No invocation survives a restart, so every
 * lease held at start-up is a dead one: it is released at once (fenced by its owner and token, so a lease
 * taken since is left alone; the next holder's token is higher still), rather than blocking its pool for
 * the rest of its 90 s, longer than the soak's 45 s availability bound (found by the 60 s soak test). One
 * Reconcile Request each then stands in for the event the kill lost.
 */

import type { StateTable } from '../../../adapters/state-table/index.ts';
import {
  FENCING_TOKEN,
  isConditionFailed,
  keys,
  LEASE_OWNER,
  LEASE_UNTIL,
  POOL_PREFIX,
  prefixes,
  queryAll,
  SORT_KEY,
  updateItem,
} from '../../../adapters/state-table/index.ts';
import type { ReconcileRequest } from '../../../events/index.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../../events/index.ts';
import type { LocalBus } from '../bus/index.ts';

/** PutEvents takes at most this many entries per call. */
const PUT_EVENTS_BATCH = 10;

export interface HeldLease {
  clusterId: string;
  nodePool: string;
  owner: string;
  token: number | undefined;
}

/** The (cluster, pool) keys whose lease is held in the table, for the given clusters. */
export async function heldLeases(table: StateTable, clusterIds: string[]): Promise<HeldLease[]> {
  const held: HeldLease[] = [];
  for (const clusterId of clusterIds) {
    const items = await queryAll(table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.pool(clusterId, 'x').pk, ':prefix': prefixes.pools },
    });
    for (const item of items) {
      if (item[LEASE_OWNER] === undefined) continue;
      const token = item[FENCING_TOKEN];
      held.push({
        clusterId,
        nodePool: String(item[SORT_KEY]).slice(POOL_PREFIX.length),
        owner: String(item[LEASE_OWNER]),
        token: typeof token === 'number' ? token : undefined,
      });
    }
  }
  return held;
}

/** Releases a dead lease, only if it is still the one found (same owner and fencing token). */
async function releaseDeadLease(table: StateTable, lease: HeldLease): Promise<void> {
  try {
    await updateItem(table, {
      Key: keys.pool(lease.clusterId, lease.nodePool),
      UpdateExpression: 'REMOVE #leaseOwner, #leaseUntil',
      ConditionExpression:
        lease.token === undefined
          ? '#leaseOwner = :owner AND attribute_not_exists(#fencingToken)'
          : '#leaseOwner = :owner AND #fencingToken = :token',
      ExpressionAttributeNames: {
        '#leaseOwner': LEASE_OWNER,
        '#leaseUntil': LEASE_UNTIL,
        '#fencingToken': FENCING_TOKEN,
      },
      ExpressionAttributeValues: {
        ':owner': lease.owner,
        ...(lease.token === undefined ? {} : { ':token': lease.token }),
      },
    });
  } catch (err) {
    // Taken by a live invocation since: its lease stands.
    if (!isConditionFailed(err)) throw err;
  }
}

/** Releases each dead lease of the given (resumed) clusters and puts one Reconcile Request for its pool; returns how many. */
export async function requestHeldLeases(
  table: StateTable,
  clusterIds: string[],
  bus: Pick<LocalBus, 'putEvents'>,
  eventBusName: string,
): Promise<number> {
  const held = await heldLeases(table, clusterIds);
  for (const lease of held) await releaseDeadLease(table, lease);
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
