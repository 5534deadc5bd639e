/**
 * What the invariants read: a cluster's objects straight from its storage, not through its API, so the
 * faults injected into the API (errors, latency, dropped watches) never blind the checker itself.
 */
import type { Storage } from '../local/kube-api/storage/types.ts';
import { resourcePrefix } from '../local/kube-api/storage/keys.ts';
import { PRODUCT_NAMESPACE } from '../local/fleet/seed.ts';

export type Obj = Record<string, any>;

export const OWNED_KINDS = {
  Secret: { group: '', resource: 'secrets', path: '/api/v1' },
  ConfigMap: { group: '', resource: 'configmaps', path: '/api/v1' },
  Service: { group: '', resource: 'services', path: '/api/v1' },
  ServiceAccount: { group: '', resource: 'serviceaccounts', path: '/api/v1' },
  Deployment: { group: 'apps', resource: 'deployments', path: '/apis/apps/v1' },
} as const;
export type OwnedKind = keyof typeof OWNED_KINDS;

export interface ClusterView {
  at: number;
  pools: Obj[];
  nodes: Obj[];
  spirits: Obj[];
  /** Pods of the product namespace (evidence when a pool is not Available). */
  pods: Obj[];
  owned: { kind: OwnedKind; obj: Obj }[];
}

async function listAll(storage: Storage, group: string, resource: string, namespace?: string): Promise<Obj[]> {
  const prefix = `${resourcePrefix({ group, resource })}/${namespace ? `${namespace}/` : ''}`;
  const { items } = await storage.list(prefix);
  return items.map((i) => i.value as Obj);
}

export async function readCluster(storage: Storage): Promise<ClusterView> {
  const at = Date.now();
  const [pools, nodes, spirits, pods] = await Promise.all([
    listAll(storage, 'apps.openyurt.io', 'nodepools'),
    listAll(storage, '', 'nodes'),
    listAll(storage, 'poolspirit.io', 'poolspirits'),
    listAll(storage, '', 'pods', PRODUCT_NAMESPACE),
  ]);
  const owned: ClusterView['owned'] = [];
  for (const [kind, r] of Object.entries(OWNED_KINDS) as [OwnedKind, (typeof OWNED_KINDS)[OwnedKind]][]) {
    for (const obj of await listAll(storage, r.group, r.resource, PRODUCT_NAMESPACE)) {
      if (obj.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'pool-spirit') owned.push({ kind, obj });
    }
  }
  return { at, pools, nodes, spirits, pods, owned };
}

export const isReady = (node: Obj) => (node.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
export const poolOf = (node: Obj): string | undefined => node.metadata?.labels?.['apps.openyurt.io/nodepool'];
export const isAvailable = (spirit: Obj) => (spirit.status?.conditions ?? []).some((c: Obj) => c.type === 'Available' && c.status === 'True');
export const ownedPool = (obj: Obj): string | undefined => obj.metadata?.labels?.['poolspirit.io/pool'];
