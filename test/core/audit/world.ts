/**
 * A healthy observed cluster for the pure audit tests: two edge pools rendered by the real core, their
 * objects live as rendered, Available PoolSpirits with a fresh leader and healthy etcd, each pod on a node of
 * its own pool. Each test injects one kind of drift into a copy.
 */

import type { ClusterObservation } from '../../../core/audit/index.ts';
import { type KubeObject, type NodePool, renderPoolSpirit } from '../../../core/index.ts';
import { DAY, NOW, nodePool, renderInput } from '../fixtures.ts';

export { DAY, NOW };
export const CLUSTER = 'edge-eu-1';
export const POOLS = ['hangzhou', 'shanghai'];

export function poolSpirit(pool: string, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'poolspirit.io/v1alpha1',
    kind: 'PoolSpirit',
    metadata: {
      name: pool,
      uid: `uid-ps-${pool}`,
      generation: 1,
      creationTimestamp: new Date(NOW.getTime() - DAY).toISOString(),
    },
    spec: { nodePool: pool },
    status: {
      observedGeneration: 1,
      phase: 'Running',
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'Available',
          message: 'ok',
          lastTransitionTime: new Date(NOW.getTime() - DAY).toISOString(),
        },
      ],
      leader: { holder: `${pool}-node-0`, renewTime: new Date(NOW.getTime() - 10_000).toISOString(), transitions: 2 },
      etcd: { healthy: true, alarms: [], dbSizeBytes: 40 * 2 ** 20, quotaBackendBytes: 512 * 2 ** 20 },
      certificates: {
        notAfter: new Date(NOW.getTime() + 300 * DAY).toISOString(),
        caNotAfter: new Date(NOW.getTime() + 3000 * DAY).toISOString(),
      },
      ...status,
    },
  };
}

export function node(
  name: string,
  pool: string | undefined,
  providerID = `aws:///eu-west-1a/i-0${name.length}abc`,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: pool ? { 'apps.openyurt.io/nodepool': pool } : {} },
    spec: { providerID },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

export function pod(pool: string, nodeName: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `ps-${pool}-abc-xyz`,
      namespace: 'pool-spirit-system',
      labels: { 'app.kubernetes.io/managed-by': 'pool-spirit', 'poolspirit.io/pool': pool },
    },
    spec: { nodeName },
  };
}

let rendered: Promise<Record<string, KubeObject[]>> | undefined;
async function renderAll(): Promise<Record<string, KubeObject[]>> {
  rendered ??= (async () => {
    const out: Record<string, KubeObject[]> = {};
    for (const pool of POOLS) {
      const input = await renderInput();
      const r = await renderPoolSpirit({
        ...input,
        nodePool: nodePool(pool),
        poolSpirit: {
          metadata: { name: pool, uid: `uid-ps-${pool}` },
          spec: { ...input.poolSpirit.spec, nodePool: pool },
        },
      });
      out[pool] = r.objects;
    }
    return out;
  })();
  return rendered;
}

export async function healthyCluster(): Promise<ClusterObservation> {
  const desired = await renderAll();
  const pools: NodePool[] = POOLS.map((p) => nodePool(p));
  // Cloned apart: structuredClone keeps shared references, and live objects must not alias desired ones.
  const live = structuredClone(desired);
  return structuredClone({
    clusterId: CLUSTER,
    nodePools: [...pools, nodePool('cloud-a', { spec: { type: 'Cloud' } })],
    poolSpirits: POOLS.map((p) => poolSpirit(p)),
    owned: POOLS.flatMap((p) => live[p]),
    pods: POOLS.map((p) => pod(p, `${p}-node-0`)),
    nodes: POOLS.flatMap((p) => [node(`${p}-node-0`, p), node(`${p}-node-1`, p)]),
    desired: Object.fromEntries(POOLS.map((p) => [p, { objects: desired[p] }])),
  });
}
