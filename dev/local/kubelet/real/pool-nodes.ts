/**
 * Real nodes for a cluster's NodePools (`local up --kubelet real`, `local nodes add --kubelet real`): `count`
 * nodes per pool, named as the seeded ones are (<pool>-node-<n>), each a kubelet + containerd of its own
 * (real-node.ts) labelled into its pool, so the real scheduler places the pool's pool-spirit there.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { defaultNodeImages } from './node-images.ts';
import { type NodeControlPlane, type RealNode, startRealNode } from './real-node.ts';

export interface PoolNodesOptions {
  controlPlane: NodeControlPlane;
  admin: KubeConfig;
  /** Node names per pool. */
  nodes: ReadonlyArray<{ name: string; pool: string }>;
  log?: (line: string) => void;
}

/** Starts the nodes two at a time (each start imports images and runs a kubelet up); all or none. */
export async function startPoolNodes(opts: PoolNodesOptions): Promise<RealNode[]> {
  const images = defaultNodeImages();
  const started: RealNode[] = [];
  try {
    for (let i = 0; i < opts.nodes.length; i += 2) {
      const batch = opts.nodes.slice(i, i + 2).map((n) =>
        startRealNode({
          ...n,
          controlPlane: opts.controlPlane,
          admin: opts.admin,
          images,
          ...(opts.log ? { log: opts.log } : {}),
        }).then((node) => {
          started.push(node);
          return node;
        }),
      );
      await Promise.all(batch);
    }
    return started;
  } catch (err) {
    await Promise.allSettled(started.map((n) => n.stop()));
    throw err;
  }
}
