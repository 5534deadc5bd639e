import type { InformerResource } from '../adapters/kubernetes/informer.ts';
import type { ChangeNoticeKind } from '../events/index.ts';
import { FIELD_MANAGER } from '../adapters/kubernetes/client.ts';

type Obj = Record<string, any>;

/** What the forwarder remembers per object: enough to decide relevance, never the whole object. */
export interface ObjectSummary {
  uid: string;
  resourceVersion: string;
  generation?: number;
  poolName?: string;
  /** Kind-specific state whose change is worth a notice (e.g. a Node's Ready status). */
  state?: string;
  /** Created by the reconciler and not touched by anyone since. */
  reconcilerCreated?: boolean;
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

/**
 * An object the reconciler itself just created needs no notice: the invocation that created it is still
 * converging that pool (and if it fails, the bus retries the event that started it). Anyone else's write
 * adds a managedFields entry, so the object stops counting as the reconciler's own.
 */
function createdByReconciler(obj: Obj): boolean {
  const fields: Obj[] = obj.metadata?.managedFields ?? [];
  return obj.metadata?.generation === 1 && fields.length === 1 && fields[0].manager === FIELD_MANAGER;
}

/** Relevance for kinds the reconciler creates: not its own creation; then a spec change or a state change. */
const changedByOthers = (before: ObjectSummary | undefined, after: ObjectSummary | undefined) =>
  !before ? !after?.reconcilerCreated : !after || before.generation !== after.generation || before.state !== after.state;

/** What of a PoolSpirit someone other than the reconciler changes: deletion and the agent's reports. */
function poolSpiritState(obj: Obj): string {
  const st = obj.status ?? {};
  return JSON.stringify([obj.metadata?.deletionTimestamp ?? null, st.bootstrap?.appliedHash ?? null, st.leader?.holder ?? null, st.etcd?.healthy ?? null, st.etcd?.alarms ?? null]);
}

/**
 * What of a pool-spirit Deployment the reconciler acts on: its rollout and readiness counts, and labels or
 * annotations someone may have edited. Spec edits bump the generation, which `base` already carries.
 */
function deploymentState(obj: Obj): string {
  const st = obj.status ?? {};
  const md = obj.metadata ?? {};
  return JSON.stringify([
    md.deletionTimestamp ?? null,
    st.observedGeneration ?? null,
    st.replicas ?? 0,
    st.updatedReplicas ?? 0,
    st.readyReplicas ?? 0,
    st.availableReplicas ?? 0,
    md.labels ?? null,
    md.annotations ?? null,
  ]);
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
      summarize: (o) => ({ ...base(o), poolName: o.spec?.nodePool ?? o.metadata?.name, state: poolSpiritState(o), reconcilerCreated: createdByReconciler(o) }),
      // The reconciler's own status writes come back as changes; only a spec change (generation), a
      // deletion or what the agent reports needs another reconcile.
      isRelevant: changedByOthers,
    },
    {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      namespace,
      path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
      labelSelector: POOL_LABEL,
      summarize: (o) => ({ ...base(o), poolName: o.metadata?.labels?.[POOL_LABEL], state: deploymentState(o), reconcilerCreated: createdByReconciler(o) }),
      // Status writes that change no count (conditions' heartbeat times, collisionCount…) need no reconcile.
      isRelevant: changedByOthers,
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
