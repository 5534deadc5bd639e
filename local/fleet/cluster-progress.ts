import type { KubeConfig } from '@kubernetes/client-node';
import { Informer, type WatchedObject } from '../../adapters/kubernetes/informer.ts';
import { poolSpiritIntent, type NodePool } from '../../core/nodepool.ts';
import type { ObjectCacheFactory } from '../kube-api/index.ts';

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

/** A summary per object of one collection, kept current: what an Informer keeps, and cachedSummaries below. */
interface Summaries<S> {
  run(): Promise<void>;
  stop(): void;
  readonly hasSynced: Promise<void>;
  values(): Iterable<S>;
}

interface Watched<S, O extends WatchedObject> {
  apiVersion: string;
  kind: string;
  path: string;
  summarize(o: O): S;
}

const NODE_POOLS: Watched<PoolSummary, NodePool> = {
  apiVersion: 'apps.openyurt.io/v1beta1',
  kind: 'NodePool',
  path: '/apis/apps.openyurt.io/v1beta1/nodepools',
  summarize: (o) => ({ resourceVersion: rv(o), wanted: poolSpiritIntent(o, {}).wanted }),
};

const POOL_SPIRITS: Watched<SpiritSummary, WatchedPoolSpirit> = {
  apiVersion: 'poolspirit.io/v1alpha1',
  kind: 'PoolSpirit',
  path: '/apis/poolspirit.io/v1alpha1/poolspirits',
  summarize: (o) => ({
    resourceVersion: rv(o),
    available: (o.status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True'),
    failing: o.status?.phase === 'Invalid',
  }),
};

/** Through the kubeconfig, as any client: list and watch over HTTP. */
function watchedSummaries<S extends { resourceVersion: string }, O extends WatchedObject>(
  kc: KubeConfig,
  w: Watched<S, O>,
): Summaries<S> {
  return new Informer<S, O>(kc, { ...w, isRelevant: () => false }, { onChange: async () => undefined });
}

/** From the local API's in-process cache of the collection, when it runs in this thread (decision 0036). */
function cachedSummaries<S, O extends WatchedObject>(caches: ObjectCacheFactory, w: Watched<S, O>): Summaries<S> {
  const summaries = new Map<string, S>();
  const cache = caches(w.path, (type, obj) => {
    const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`;
    if (type === 'DELETED') summaries.delete(key);
    else summaries.set(key, w.summarize(obj as O));
  });
  return {
    run: () => cache.run(),
    stop: () => cache.stop(),
    hasSynced: cache.hasSynced,
    values: () => summaries.values(),
  };
}

/**
 * One cluster's convergence, kept current by watching NodePools and PoolSpirits. Listing every pool of
 * every cluster on each progress tick made the progress view itself the fleet's biggest API client at
 * 20 × 50; a watch costs one small event per change instead. Beside its local API (`caches`), it reads the
 * API's in-process caches: the view is the fleet's measuring instrument, and its HTTP watches (every
 * PoolSpirit change serialized, sent and parsed once more) weighed on what it measures.
 */
export class ClusterProgressTracker {
  private readonly pools: Summaries<PoolSummary>;
  private readonly spirits: Summaries<SpiritSummary>;

  constructor(kc: KubeConfig, caches?: ObjectCacheFactory) {
    this.pools = caches ? cachedSummaries(caches, NODE_POOLS) : watchedSummaries(kc, NODE_POOLS);
    this.spirits = caches ? cachedSummaries(caches, POOL_SPIRITS) : watchedSummaries(kc, POOL_SPIRITS);
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
    for (const p of this.pools.values()) if (p.wanted) wanted += 1;
    let available = 0;
    let failing = 0;
    for (const s of this.spirits.values()) {
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
