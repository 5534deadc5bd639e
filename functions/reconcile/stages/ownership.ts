/**
 * Who owns what: the PoolSpirit we created for a NodePool, and the pool CA Secret, which the NodePool owns
 * so that it outlives a deleted PoolSpirit.
 */

import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import type { NodePool } from '../../../core/index.ts';
import { MANAGED_BY, MANAGED_BY_LABEL, objectNames } from '../../../core/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import { poolSpiritRef } from '../../../core/render/index.ts';

/**
 * When the pool stops wanting a pool-spirit, ownership of its CA goes back to the PoolSpirit about to be
 * deleted, so garbage collection takes the CA with everything else (the reconciler holds no delete right on
 * Secrets). Returns what it wrote, if anything.
 */
export async function handCaToPoolSpirit(
  client: ClusterClient,
  namespace: string,
  poolSpirit: KubeObject,
  nodePool: NodePool,
): Promise<string[]> {
  const ref = { apiVersion: 'v1', kind: 'Secret', namespace, name: objectNames(poolSpirit.metadata.name).caSecret };
  const ca = await client.get(ref);
  const owners = ca?.metadata.ownerReferences ?? [];
  if (!ca || !owners.some((o) => o.kind === 'NodePool' && o.uid === nodePool.metadata.uid)) return [];
  const { name, uid } = poolSpirit.metadata;
  if (uid === undefined)
    throw new Error(`PoolSpirit ${name} has no metadata.uid; the CA Secret's owner reference needs it`);
  const owner = poolSpiritRef({ metadata: { name, uid } });
  await client.patchJson(ref, [
    { op: 'test', path: '/metadata/uid', value: ca.metadata.uid },
    { op: 'replace', path: '/metadata/ownerReferences', value: [owner] },
  ]);
  return [`hand ${describe(ca)} to ${describe(poolSpirit)}`];
}

/** A CA Secret still owned by an earlier NodePool of this name is that pool's, waiting for collection. */
export function ownedByOtherNodePool(obj: KubeObject, nodePool: NodePool): boolean {
  return (obj.metadata.ownerReferences ?? []).some(
    (o) => o.kind === 'NodePool' && o.name === nodePool.metadata.name && o.uid !== nodePool.metadata.uid,
  );
}

/** The PoolSpirit was created by this reconciler for this very NodePool (same uid), not by a person. */
export function createdByUsFor(poolSpirit: KubeObject, nodePool: NodePool): boolean {
  const managed = poolSpirit.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
  const owned = (poolSpirit.metadata.ownerReferences ?? []).some(
    (ref) => ref.kind === 'NodePool' && ref.uid === nodePool.metadata.uid && ref.controller === true,
  );
  return managed && owned;
}

/** `Kind namespace/name`, as the reconcile's `applied` list names what it wrote. */
export function describe(obj: KubeObject): string {
  return `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
}
