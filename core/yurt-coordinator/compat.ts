import type { NodePool } from '../nodepool.ts';

/**
 * Opt-in, per pool: a NodePool labelled `poolspirit.io/yurt-coordinator: compat` gets a pool-spirit that an
 * unmodified YurtHub v1.4 – v1.6.0 can use as its yurt-coordinator (etcd reachable through a proxy with a
 * bounded etcd identity, the coordinator client CA trusted, the coordinator Service names as SANs). A whole
 * cluster opts in by labelling its edge pools. Without the label nothing about a pool-spirit changes.
 */
export const COMPAT_LABEL = 'poolspirit.io/yurt-coordinator';
export const COMPAT_VALUE = 'compat';

export function wantsYurtCoordinatorCompat(nodePool: Pick<NodePool, 'metadata'>): boolean {
  return nodePool.metadata.labels?.[COMPAT_LABEL] === COMPAT_VALUE;
}

/**
 * Compat in effect: the pool asks for it, and the cluster's hubs can use a coordinator (hub-support.ts). A
 * refused pool is rendered and published as any pool; its condition says why.
 */
export function compatInEffect(nodePool: Pick<NodePool, 'metadata'>, compatRefused: boolean | undefined): boolean {
  return !compatRefused && wantsYurtCoordinatorCompat(nodePool);
}
