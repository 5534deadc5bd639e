/**
 * Stage 1 of a reconcile pass: read the NodePool and its PoolSpirit, and decide what the pool wants.
 * Reads only.
 */

import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import type { NodePool, PoolSpiritIntent } from '../../../core/index.ts';
import { poolSpiritIntent } from '../../../core/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import type { ReconcileDeps } from '../deps.ts';

export type Observed =
  /** The NodePool is gone (or going): owner references take the PoolSpirit and everything under it. */
  | { kind: 'gone' }
  /** Not an edge pool, or opted out: a PoolSpirit we created for it must go. */
  | { kind: 'unwanted'; nodePool: NodePool; poolSpirit: KubeObject | undefined }
  | {
      kind: 'wanted';
      nodePool: NodePool;
      intent: Extract<PoolSpiritIntent, { wanted: true }>;
      poolSpirit: KubeObject | undefined;
    };

export async function observe(deps: ReconcileDeps, client: ClusterClient, poolName: string): Promise<Observed> {
  // Both at once: one round trip instead of two (a pass pays CPU for each it waits on); the PoolSpirit read
  // is wasted only for a pool that is gone.
  const poolSpiritRead = client.getPoolSpirit(poolName);
  poolSpiritRead.catch(() => undefined);
  const nodePool = (await client.getNodePool(poolName)) as NodePool | undefined;
  if (!nodePool) return { kind: 'gone' };
  const intent = poolSpiritIntent(nodePool, deps.fleetDefaults);
  if (!intent.wanted && intent.reason === 'NodePoolDeleting') return { kind: 'gone' };
  const poolSpirit = await poolSpiritRead;
  return intent.wanted ? { kind: 'wanted', nodePool, intent, poolSpirit } : { kind: 'unwanted', nodePool, poolSpirit };
}
