import type { KubeConfig } from '@kubernetes/client-node';
import { Informer, type WatchedObject } from '../../../adapters/kubernetes/informer.ts';
import { type NodePool, poolSpiritIntent } from '../../../core/nodepool.ts';
import { nodePoolCollectionPath } from '../../../forwarder/watched-resources.ts';

/** What the tracker reads of a PoolSpirit: its status as the reconciler writes it. */
interface WatchedPoolSpirit extends WatchedObject {
  status?: { phase?: string; conditions?: Array<{ type?: string; status?: string }> };
}

interface PoolSummary {
  resourceVersion: string;
  wanted: boolean;
}
interface SpiritSummary {
  resourceVersion: string;
  available: boolean;
  failing: boolean;
}

const rv = (o: WatchedObject) => String(o.metadata?.resourceVersion ?? '');

/**
 * One cluster's convergence, kept current by watching NodePools and PoolSpirits. Listing every pool of
 * every cluster on each progress tick made the progress view itself the fleet's biggest API client at
 * 20 × 50; a watch costs one small event per change instead.
 */
export class ClusterProgressTracker {
  private readonly pools: Informer<PoolSummary, NodePool>;
  private readonly spirits: Informer<SpiritSummary, WatchedPoolSpirit>;

  constructor(kc: KubeConfig) {
    const ignore = async () => undefined;
    this.pools = new Informer<PoolSummary, NodePool>(
      kc,
      {
        apiVersion: 'apps.openyurt.io/v1beta1',
        kind: 'NodePool',
        path: '/apis/apps.openyurt.io/v1beta1/nodepools',
        // The version the product reads, not one the cluster may only serve through a conversion webhook.
        resolvePath: (objects) => nodePoolCollectionPath(objects),
        summarize: (o) => ({ resourceVersion: rv(o), wanted: poolSpiritIntent(o, {}).wanted }),
        isRelevant: () => false,
      },
      { onChange: ignore },
    );
    this.spirits = new Informer<SpiritSummary, WatchedPoolSpirit>(
      kc,
      {
        apiVersion: 'poolspirit.io/v1alpha1',
        kind: 'PoolSpirit',
        path: '/apis/poolspirit.io/v1alpha1/poolspirits',
        summarize: (o) => ({
          resourceVersion: rv(o),
          available: (o.status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True'),
          failing: o.status?.phase === 'Invalid',
        }),
        isRelevant: () => false,
      },
      { onChange: ignore },
    );
  }

  /** Starts both watches and resolves once each has listed. */
  async start(): Promise<void> {
    void this.pools.run();
    void this.spirits.run();
    await Promise.all([this.pools.hasSynced, this.spirits.hasSynced]);
  }

  /** Wanted = Edge NodePools not opted out; available = PoolSpirits with condition Available=True. */
  current(): { wanted: number; available: number; failing: number } {
    let wanted = 0;
    for (const p of this.pools.snapshot().values()) if (p.wanted) wanted += 1;
    let available = 0;
    let failing = 0;
    for (const s of this.spirits.snapshot().values()) {
      if (s.available) available += 1;
      if (s.failing) failing += 1;
    }
    return { wanted, available, failing };
  }

  stop(): void {
    this.pools.stop();
    this.spirits.stop();
  }
}
