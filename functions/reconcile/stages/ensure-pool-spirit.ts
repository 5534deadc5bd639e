/**
 * Stage 2 of a reconcile pass: make the PoolSpirit exist exactly when the pool wants one.
 *  - an unwanted pool loses the PoolSpirit *we* created (GC removes the rest; a person's stays);
 *  - a wanted pool whose previous PoolSpirit is still being collected waits (requeue);
 *  - a wanted pool with none gets one from the fleet defaults, owned by the NodePool. Its spec is the
 *    operator's from then on: we never re-apply our defaults over it.
 */

import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import type { Observed } from './observe.ts';
import { createdByUsFor, describe, handCaToPoolSpirit } from './ownership.ts';

/** How long to wait for a PoolSpirit being collected: garbage collection takes seconds. */
export const COLLECTION_WAIT_MS = 2_000;

export type Ensured =
  | { kind: 'ready'; poolSpirit: KubeObject; applied: string[] }
  | { kind: 'removed'; applied: string[] }
  | { kind: 'wait'; afterMs: number; why: string };

export async function ensurePoolSpirit(
  client: ClusterClient,
  namespace: string,
  observed: Exclude<Observed, { kind: 'gone' }>,
): Promise<Ensured> {
  const { nodePool, poolSpirit } = observed;
  if (observed.kind === 'unwanted') {
    if (!poolSpirit || !createdByUsFor(poolSpirit, nodePool) || poolSpirit.metadata.deletionTimestamp)
      return { kind: 'removed', applied: [] };
    const applied = await handCaToPoolSpirit(client, namespace, poolSpirit, nodePool);
    await client.delete(
      { apiVersion: poolSpirit.apiVersion, kind: poolSpirit.kind, name: poolSpirit.metadata.name },
      poolSpirit.metadata.uid,
    );
    return { kind: 'removed', applied: [...applied, `delete ${describe(poolSpirit)}`] };
  }
  if (poolSpirit?.metadata.deletionTimestamp) {
    // The previous PoolSpirit (e.g. of a deleted and re-created pool) is still being collected; the next
    // pass creates the new one once it is gone.
    return {
      kind: 'wait',
      afterMs: COLLECTION_WAIT_MS,
      why: `PoolSpirit ${poolSpirit.metadata.name} is being deleted; retry once it is gone`,
    };
  }
  if (poolSpirit) return { kind: 'ready', poolSpirit, applied: [] };
  const created = await client.apply(observed.intent.spec);
  return { kind: 'ready', poolSpirit: created, applied: [describe(created)] };
}
