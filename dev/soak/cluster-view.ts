/**
 * What the invariants read: a cluster's objects straight from its storage, not through its API, so the
 * faults injected into the API (errors, latency, dropped watches) never blind the checker itself.
 */

import type { ObjectMeta } from '../../core/kube.ts';
import { PRODUCT_NAMESPACE } from '../local/fleet/seed.ts';
import { resourcePrefix } from '../local/kube-api/storage/keys.ts';
import type { Storage } from '../local/kube-api/storage/types.ts';

/** A status condition, as every kind the soak reads carries them. */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: string;
}

/**
 * An object as stored: the fields the invariants and operations read, each optional where the API leaves it
 * so, and the rest unknown. Read from storage without validation: every kind is one of ours or a core kind,
 * written through the API, which enforces these shapes.
 */
export interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta & { deletionTimestamp?: string; managedFields?: ManagedFieldsEntry[] };
  spec?: ObjSpec;
  status?: ObjStatus;
  /** ConfigMap and Secret data. */
  data?: Record<string, string>;
}

/** The spec fields read: NodePool `type`, Pod `nodeName`, Deployment `template`, Service `ports`. */
export interface ObjSpec {
  type?: string;
  nodeName?: string;
  template?: { spec?: { containers?: { name: string }[] } };
  ports?: { name?: string; port?: number }[];
  [field: string]: unknown;
}

export interface ObjStatus {
  conditions?: Condition[];
  phase?: string;
  [field: string]: unknown;
}

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

async function listAll(
  storage: Pick<Storage, 'list'>,
  group: string,
  resource: string,
  namespace?: string,
): Promise<Obj[]> {
  const prefix = `${resourcePrefix({ group, resource })}/${namespace ? `${namespace}/` : ''}`;
  const { items } = await storage.list(prefix);
  // Stored through the API, which enforced the shape Obj names (see its comment).
  return items.map((i) => i.value as unknown as Obj);
}

export async function readCluster(storage: Pick<Storage, 'list'>): Promise<ClusterView> {
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

export const isReady = (node: Pick<Obj, 'status'>) =>
  (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
export const poolOf = (node: Obj): string | undefined => node.metadata?.labels?.['apps.openyurt.io/nodepool'];
export const isAvailable = (spirit: Obj) =>
  (spirit.status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True');
export const ownedPool = (obj: Obj): string | undefined => obj.metadata?.labels?.['poolspirit.io/pool'];
