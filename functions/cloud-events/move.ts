/**
 * Moves the pool-spirits off a node that is going away, in one cluster.
 *
 * The workload tolerates a not-ready/unreachable node for 120 s only after the node is *noticed* as gone
 * (node lifecycle controller, ~40 s), so a stopped or reclaimed instance costs the pool its pool-spirit for
 * about 3 minutes if nothing acts. The reconcile cannot move a running pod (it renders the same Deployment),
 * so this function does what a drain would, for pool-spirit pods only:
 *  1. cordon the node (spec.unschedulable, a scalar field: safe to apply without touching anything else,
 *     plus an annotation saying why) so the replacement is not scheduled back onto it;
 *  2. delete the pool-spirit pod, so its Deployment (Recreate, one replica) starts a new one on another
 *     Ready node of the pool (required node affinity keeps it inside the pool) — but only when the pool has
 *     such a node: otherwise deleting it would only end the pool-spirit earlier than the instance does;
 *  3. request a reconcile of the pool so its status follows the move.
 * Repeated deliveries are harmless: the second finds no pool-spirit pod left on the node.
 */

import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { poolOfSpirit } from '../../core/audit/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import { NODE_POOL_LABEL } from '../../core/nodepool.ts';
import {
  DEFAULT_NAMESPACE,
  API_VERSION as POOLSPIRIT_API_VERSION,
  KIND as POOLSPIRIT_KIND,
} from '../../core/poolspirit/names.ts';
import { labelValue, MANAGED_BY, MANAGED_BY_LABEL, POOL_LABEL } from '../../core/render/labels.ts';
import type { InstanceLeaving } from './parse.ts';
import { providerIdNames } from './parse.ts';

export const LEAVING_ANNOTATION = 'poolspirit.io/instance-leaving';

export interface PoolMove {
  pool: string;
  pod: string;
  /** `rescheduled`: pod deleted for its Deployment to replace elsewhere; `kept`: no other Ready node in the pool. */
  action: 'rescheduled' | 'kept';
}

export interface ClusterMatch {
  clusterId: string;
  node: string;
  cordoned: boolean;
  moves: PoolMove[];
}

function ready(node: KubeObject): boolean {
  const conditions =
    (node.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

export async function moveOffLeavingNode(
  client: ClusterClient,
  clusterId: string,
  leaving: InstanceLeaving,
  now: Date,
  namespace = DEFAULT_NAMESPACE,
): Promise<ClusterMatch | undefined> {
  const nodes = await client.listByLabel('v1', 'Node', undefined, {});
  const node = nodes.find((n) =>
    providerIdNames((n.spec as { providerID?: string } | undefined)?.providerID, leaving.instanceId),
  );
  if (!node) return undefined;
  const nodeName = node.metadata.name;
  const pods = (await client.listByLabel('v1', 'Pod', namespace, { [MANAGED_BY_LABEL]: MANAGED_BY })).filter(
    (p) => (p.spec as { nodeName?: string } | undefined)?.nodeName === nodeName && !p.metadata.deletionTimestamp,
  );
  const match: ClusterMatch = { clusterId, node: nodeName, cordoned: false, moves: [] };
  if (pods.length === 0) return match;

  await client.apply({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName,
      annotations: { [LEAVING_ANNOTATION]: `${leaving.why} of ${leaving.instanceId} at ${now.toISOString()}` },
    },
    spec: { unschedulable: true },
  });
  match.cordoned = true;

  const spirits = await client.listByLabel(POOLSPIRIT_API_VERSION, POOLSPIRIT_KIND, undefined, {});
  const poolByLabel = new Map(spirits.map((s) => [labelValue(poolOfSpirit(s)), poolOfSpirit(s)]));
  for (const pod of pods) {
    const label = pod.metadata.labels?.[POOL_LABEL] ?? '';
    const pool = poolByLabel.get(label) ?? label;
    const elsewhere = nodes.some(
      (n) =>
        n.metadata.name !== nodeName &&
        n.metadata.labels?.[NODE_POOL_LABEL] === pool &&
        ready(n) &&
        !(n.spec as { unschedulable?: boolean } | undefined)?.unschedulable,
    );
    if (elsewhere)
      await client.delete({ apiVersion: 'v1', kind: 'Pod', namespace, name: pod.metadata.name }, pod.metadata.uid);
    match.moves.push({ pool, pod: pod.metadata.name, action: elsewhere ? 'rescheduled' : 'kept' });
  }
  return match;
}
