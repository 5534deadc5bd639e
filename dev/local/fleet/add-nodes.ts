import { HttpMethod, type KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { nodePoolCollectionPath } from '../../../forwarder/watched-resources.ts';
import { nodeReady } from '../kubelet/scheduling.ts';
import { edgeNode, nodeName } from './seed.ts';

/** A list's items, as far as their names. */
type NamedList = { items?: Array<{ metadata?: { name?: string } }> };

export class NoSuchPoolError extends Error {
  readonly pool: string;
  constructor(pool: string, existing: string[]) {
    super(
      `there is no NodePool "${pool}"${existing.length ? ` (NodePools: ${existing.join(', ')})` : ' (the cluster has no NodePools)'}`,
    );
    this.pool = pool;
    this.name = 'NoSuchPoolError';
  }
}

/**
 * Gives a NodePool `count` more Ready edge nodes, as seeding does (dev/local/fleet/seed.ts): labelled for the
 * pool, with the status a registered kubelet reports, so the local kubelet schedules its pool-spirit
 * there. Names continue after the pool's existing nodes (`<pool>-node-<n>`). Returns the names created.
 */
export async function addPoolNodes(kc: KubeConfig, pool: string, count: number): Promise<string[]> {
  const api = RawObjectApi.fromKubeConfig(kc);
  const pools = await api.requestJson<NamedList>(HttpMethod.GET, await nodePoolCollectionPath(api));
  const poolNames: string[] = (pools.items ?? []).map((p) => String(p.metadata?.name));
  if (!poolNames.includes(pool)) throw new NoSuchPoolError(pool, poolNames);
  const nodes = await api.requestJson<NamedList>(HttpMethod.GET, '/api/v1/nodes');
  const taken = new Set<string>((nodes.items ?? []).map((n) => String(n.metadata?.name)));
  const created: string[] = [];
  for (let j = 0; created.length < count; j++) {
    const name = nodeName(pool, j);
    if (taken.has(name)) continue;
    const node = edgeNode(name, pool);
    const stored = await api.createJson(node);
    // An API server that drops status on create (kube-apiserver keeps a Node's) still gets it set.
    if (!nodeReady(stored))
      await api.requestJson(HttpMethod.PUT, `/api/v1/nodes/${name}/status`, {
        body: { ...stored, status: node.status },
      });
    created.push(name);
  }
  return created;
}
