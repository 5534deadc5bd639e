import { controllerRef, type KubeObject } from './kube.ts';
import type { PoolSpirit, PoolSpiritSpec } from './poolspirit/api.ts';
import { API_VERSION, KIND } from './poolspirit/names.ts';
import { managedLabels } from './render/labels.ts';

/** The parts of an OpenYurt NodePool (any served version) pool-spirit reads. */
export interface NodePool extends KubeObject {
  metadata: KubeObject['metadata'] & { deletionTimestamp?: string };
  spec?: {
    type?: string;
    hostNetwork?: boolean;
    taints?: Array<{ key: string; value?: string; effect: string }>;
    [field: string]: unknown;
  };
}

/** Pool type labels: `nodepool.openyurt.io/type` since OpenYurt v1.4, `openyurt.io/node-pool-type` before. */
export const POOL_TYPE_LABELS = ['nodepool.openyurt.io/type', 'openyurt.io/node-pool-type'] as const;
/** Node label carrying the pool a node belongs to. */
export const NODE_POOL_LABEL = 'apps.openyurt.io/nodepool';
/**
 * Opt-out: an edge pool annotated `poolspirit.io/disabled: "true"` gets no pool-spirit (and an existing one
 * is removed by the reconciler). An annotation rather than a label: it is a note to the product, not
 * something anybody selects on.
 */
export const OPT_OUT_ANNOTATION = 'poolspirit.io/disabled';

export interface FleetDefaults {
  /** Bundle version new PoolSpirits start on; unset leaves it to the product default at parse time. */
  bundleVersion?: string;
  /** Fleet-wide spec fields for new PoolSpirits (e.g. etcd storage); nodePool and version are set here. */
  spec?: Omit<PoolSpiritSpec, 'nodePool' | 'version'>;
}

export type PoolSpiritIntent =
  | { wanted: true; reason: 'EdgePool'; message: string; spec: PoolSpirit }
  | { wanted: false; reason: 'NotEdge' | 'OptedOut' | 'NodePoolDeleting'; message: string };

/** How the pool declares its type: spec.type first, then either label; undefined when nothing says. */
export function poolType(nodePool: NodePool): string | undefined {
  if (typeof nodePool.spec?.type === 'string' && nodePool.spec.type !== '') return nodePool.spec.type;
  for (const label of POOL_TYPE_LABELS) {
    const value = nodePool.metadata.labels?.[label];
    if (value) return value;
  }
  return undefined;
}

export function isEdgePool(nodePool: NodePool): boolean {
  return poolType(nodePool)?.toLowerCase() === 'edge';
}

/**
 * Whether this NodePool should have a pool-spirit, and if so the PoolSpirit to create for it: named after
 * the pool (both are cluster-scoped, so the name is unique) and owned by it, so deleting the pool deletes
 * the PoolSpirit and, through it, everything rendered for it.
 *
 * The spec is what to *create*; operators may edit a PoolSpirit afterwards, so the reconciler should not
 * re-apply this spec over an existing object.
 */
export function poolSpiritIntent(nodePool: NodePool, defaults: FleetDefaults = {}): PoolSpiritIntent {
  const name = nodePool.metadata.name;
  if (nodePool.metadata.deletionTimestamp) {
    return { wanted: false, reason: 'NodePoolDeleting', message: `NodePool ${name} is being deleted` };
  }
  if (nodePool.metadata.annotations?.[OPT_OUT_ANNOTATION]?.toLowerCase() === 'true') {
    return { wanted: false, reason: 'OptedOut', message: `NodePool ${name} is annotated ${OPT_OUT_ANNOTATION}=true` };
  }
  if (!isEdgePool(nodePool)) {
    const type = poolType(nodePool);
    return { wanted: false, reason: 'NotEdge', message: `NodePool ${name} is of type ${type ?? '(unset)'}, not Edge` };
  }
  const spec: PoolSpiritSpec = { ...structuredClone(defaults.spec ?? {}), nodePool: name };
  if (defaults.bundleVersion) spec.version = defaults.bundleVersion;
  return {
    wanted: true,
    reason: 'EdgePool',
    message: `NodePool ${name} is an edge pool`,
    spec: {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name, labels: managedLabels(name), ownerReferences: [controllerRef(nodePool)] },
      spec,
    },
  };
}
