import type { InformerResource } from '../adapters/kubernetes/informer.ts';
import type { ChangeNoticeKind } from '../events/index.ts';

type Obj = Record<string, any>;

/** What the forwarder remembers per object: enough to decide relevance, never the whole object. */
export interface ObjectSummary {
  uid: string;
  resourceVersion: string;
  generation?: number;
  poolName?: string;
  /** Kind-specific state whose change is worth a notice (e.g. a Node's Ready status). */
  state?: string;
}

export interface WatchedResource extends InformerResource<ObjectSummary> {
  kind: ChangeNoticeKind;
}

export const NODEPOOL_LABEL = 'apps.openyurt.io/nodepool';
export const POOL_LABEL = 'poolspirit.io/pool';

const base = (obj: Obj) => ({
  uid: String(obj.metadata?.uid ?? ''),
  resourceVersion: String(obj.metadata?.resourceVersion ?? ''),
  generation: typeof obj.metadata?.generation === 'number' ? obj.metadata.generation : undefined,
});

const always = () => true;

/** What of a PoolSpirit someone other than the reconciler changes: deletion and the agent's reports. */
function poolSpiritState(obj: Obj): string {
  const st = obj.status ?? {};
  return JSON.stringify([obj.metadata?.deletionTimestamp ?? null, st.bootstrap?.appliedHash ?? null, st.leader?.holder ?? null, st.etcd?.healthy ?? null, st.etcd?.alarms ?? null]);
}

function nodeReady(obj: Obj): string {
  const ready = (obj.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready');
  return String(ready?.status ?? 'Unknown');
}

export function watchedResources(namespace: string): WatchedResource[] {
  return [
    {
      kind: 'NodePool',
      apiVersion: 'apps.openyurt.io/v1beta1',
      path: '/apis/apps.openyurt.io/v1beta1/nodepools',
      summarize: (o) => ({ ...base(o), poolName: o.metadata?.name }),
      isRelevant: always,
    },
    {
      kind: 'PoolSpirit',
      apiVersion: 'poolspirit.io/v1alpha1',
      path: '/apis/poolspirit.io/v1alpha1/poolspirits',
      summarize: (o) => ({ ...base(o), poolName: o.spec?.nodePool ?? o.metadata?.name, state: poolSpiritState(o) }),
      // The reconciler's own status writes come back as changes; only a spec change (generation), a
      // deletion or what the agent reports needs another reconcile.
      isRelevant: (before, after) =>
        !before || !after || before.generation !== after.generation || before.state !== after.state,
    },
    {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      namespace,
      path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
      labelSelector: POOL_LABEL,
      summarize: (o) => ({ ...base(o), poolName: o.metadata?.labels?.[POOL_LABEL] }),
      isRelevant: always,
    },
    {
      kind: 'Node',
      apiVersion: 'v1',
      path: '/api/v1/nodes',
      // Heartbeats bump the resourceVersion every few seconds; only pool membership and readiness matter.
      summarize: (o) => ({ ...base(o), poolName: o.metadata?.labels?.[NODEPOOL_LABEL], state: nodeReady(o) }),
      isRelevant: (before, after) =>
        !before || !after || before.poolName !== after.poolName || before.state !== after.state,
    },
  ];
}
