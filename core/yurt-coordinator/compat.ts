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
