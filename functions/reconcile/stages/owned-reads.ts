/**
 * The owned objects every pass of a rendered pool reads (its Service, the three PKI Secrets, the Deployment,
 * the bootstrap ConfigMap and the ServiceAccount), requested together at the start of the pass, beside the
 * NodePool and PoolSpirit reads, instead of in the two rounds the stages would otherwise make. A warm pass
 * pays CPU for every round trip it waits on, not only for every request; one round for all nine reads
 * is the cheapest way to learn what a converged pool looks like. Reads only: what a pass that ends early
 * (the pool gone or no longer edge) read is dropped.
 */
import type { ClusterClient, ObjectRef } from '../../../adapters/kubernetes/index.ts';
import type { ObjectNames } from '../../../core/index.ts';
import { type KubeObject, objectKey } from '../../../core/kube.ts';

/** Reads under way, by objectKey. */
export type OwnedReads = ReadonlyMap<string, Promise<KubeObject | undefined>>;

export const refKey = (ref: ObjectRef): string =>
  objectKey({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } });

/** What a pool's pass reads of its owned objects: the same names applyDesired reads and renders. */
export function ownedRefs(namespace: string, names: ObjectNames): ObjectRef[] {
  const ref = (apiVersion: string, kind: string, name: string): ObjectRef => ({ apiVersion, kind, namespace, name });
  return [
    ref('v1', 'Service', names.base),
    ref('v1', 'Secret', names.caSecret),
    ref('v1', 'Secret', names.pkiSecret),
    ref('v1', 'Secret', names.agentSecret),
    ref('apps/v1', 'Deployment', names.base),
    ref('v1', 'ConfigMap', names.bootstrapConfigMap),
    ref('v1', 'ServiceAccount', names.base),
  ];
}

export function readOwned(client: ClusterClient, refs: readonly ObjectRef[]): OwnedReads {
  const reads = new Map<string, Promise<KubeObject | undefined>>();
  for (const ref of refs) {
    const read = client.get(ref);
    // A pass that ends before it looks at a read must not leave its failure unhandled; one that looks sees it.
    read.catch(() => undefined);
    reads.set(refKey(ref), read);
  }
  return reads;
}

/** A read of `ref`: the one under way if there is one, else a new request. */
export function readVia(client: ClusterClient, owned: OwnedReads | undefined) {
  return (ref: ObjectRef): Promise<KubeObject | undefined> => owned?.get(refKey(ref)) ?? client.get(ref);
}
