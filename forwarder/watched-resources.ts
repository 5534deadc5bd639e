import { ApiException, HttpMethod } from '@kubernetes/client-node';
import { FIELD_MANAGER, NodePoolNotServedError } from '../adapters/kubernetes/client.ts';
import type { InformerResource, WatchedObject } from '../adapters/kubernetes/informer.ts';
import type { RawObjectApi } from '../adapters/kubernetes/raw-object-api.ts';
import type { KubeObject } from '../core/kube.ts';
import {
  chooseNodePoolVersion,
  NODEPOOL_GROUP,
  nodePoolKindMissing,
  servedGroupOf,
} from '../core/nodepool-versions.ts';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../core/render/labels.ts';
import { observeWorkload, type PodLike, podProblem } from '../core/status.ts';
import type { ChangeNoticeKind } from '../events/index.ts';

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
}

/**
 * The fields the forwarder reads of any watched kind (NodePool, PoolSpirit, Deployment, Pod, Node and the
 * metadata-only kinds), as the wire delivers them: every one may be missing.
 */
export interface ForwardedObject extends WatchedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ kind?: string; name?: string }>;
    managedFields?: ManagedFieldsEntry[];
  };
  spec?: { nodePool?: string };
  status?: {
    // PoolSpirit: what the agent reports.
    bootstrap?: { appliedHash?: string };
    leader?: { holder?: string };
    etcd?: { healthy?: boolean; alarms?: unknown };
    // Deployment: rollout counts.
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    // Pod and Node.
    phase?: string;
    conditions?: Condition[];
    containerStatuses?: Array<{
      name?: string;
      ready?: boolean;
      restartCount?: number;
      state?: { waiting?: { reason?: string } };
    }>;
  };
}

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
  /** When the reconciler last wrote the object (its managedFields times): only its own writes move it. */
  ownWrite?: string;
}

export interface WatchedResource extends InformerResource<ObjectSummary, ForwardedObject> {
  kind: ChangeNoticeKind;
}

export const NODEPOOL_LABEL = 'apps.openyurt.io/nodepool';
export const POOL_LABEL = 'poolspirit.io/pool';
/** Everything the reconciler renders carries both labels (core/render/labels.ts): the owned-object watches select on them. */
export const OWNED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY},${POOL_LABEL}`;

/**
 * The kinds the reconciler renders besides the Deployment, watched as metadata only: their content is
 * either secret or not needed to see who changed them (managedFields says that). The Deployment is
 * watched whole, since its rollout counts live in its status. test/forwarder/watched-resources.test.ts
 * checks this list against every kind renderPoolSpirit emits.
 */
export const OWNED_METADATA_KINDS = [
  { kind: 'Secret', resource: 'secrets' },
  { kind: 'ConfigMap', resource: 'configmaps' },
  { kind: 'ServiceAccount', resource: 'serviceaccounts' },
  { kind: 'Service', resource: 'services' },
] as const satisfies ReadonlyArray<{ kind: ChangeNoticeKind; resource: string }>;

const base = (obj: ForwardedObject) => ({
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
function createdByReconciler(obj: ForwardedObject): boolean {
  const fields = obj.metadata?.managedFields ?? [];
  return obj.metadata?.generation === 1 && fields.length === 1 && fields[0]?.manager === FIELD_MANAGER;
}

/**
 * The pool an owned object belongs to: the name of its owner (PoolSpirit or NodePool, both named after
 * the pool), else its pool label. The label alone is not enough: label values are cut to 63 characters.
 */
function poolOfOwned(obj: ForwardedObject): string | undefined {
  const owner = (obj.metadata?.ownerReferences ?? []).find((r) => r.kind === 'PoolSpirit' || r.kind === 'NodePool');
  return owner?.name ?? obj.metadata?.labels?.[POOL_LABEL];
}

type ManagedFieldsEntry = {
  manager?: string;
  operation?: string;
  subresource?: string;
  time?: string;
  fieldsV1?: unknown;
};

/** Writers of the object itself (not of a status subresource) other than the reconciler. */
function foreignWriters(obj: ForwardedObject): ManagedFieldsEntry[] {
  const fields = obj.metadata?.managedFields ?? [];
  return fields.filter((f) => f.manager !== FIELD_MANAGER && !f.subresource);
}

/**
 * What of an owned object's metadata says someone else acted on it: a deletion under way, or another
 * field manager's entry appearing or changing (its time, its fields). The reconciler's own applies change
 * only its own entry, so they send nothing; taking fields back from another manager changes that
 * manager's entry once, which costs one reconcile that finds nothing to do.
 */
function foreignState(obj: ForwardedObject): string {
  const writers = foreignWriters(obj)
    .map((f) => JSON.stringify([f.manager, f.operation, f.time, f.fieldsV1]))
    .sort();
  return JSON.stringify([obj.metadata?.deletionTimestamp ?? null, writers]);
}

/** Relevance for kinds the reconciler creates: not its own creation; then a spec change or a state change. */
const changedByOthers = (before: ObjectSummary | undefined, after: ObjectSummary | undefined) =>
  !before
    ? !after?.reconcilerCreated
    : !after || before.generation !== after.generation || before.state !== after.state;

/** What of a PoolSpirit someone other than the reconciler changes: deletion and the agent's reports. */
function poolSpiritState(obj: ForwardedObject): string {
  const st = obj.status ?? {};
  return JSON.stringify([
    obj.metadata?.deletionTimestamp ?? null,
    st.bootstrap?.appliedHash ?? null,
    st.leader?.holder ?? null,
    st.etcd?.healthy ?? null,
    st.etcd?.alarms ?? null,
  ]);
}

/**
 * What of a pool-spirit Deployment the reconciler acts on: what it derives from the rollout counts (rolled
 * out, ready: core/status.ts observeWorkload, the very function its status comes from), and labels or
 * annotations someone may have edited. Spec edits bump the generation, which `base` already carries. A
 * count that moves neither (the controller's first status, replicas 0 of 1) sends nothing.
 */
function deploymentState(obj: ForwardedObject): string {
  const md = obj.metadata ?? {};
  const { upToDate, ready } = observeWorkload({ ...obj, metadata: md } as unknown as KubeObject);
  return JSON.stringify([md.deletionTimestamp ?? null, upToDate, ready, md.labels ?? null, md.annotations ?? null]);
}

/**
 * What of a pool-spirit Pod the PoolSpirit status reports: why it is not ready (core/status.ts podProblem,
 * the very function the status message comes from: unschedulable, a crash loop, containers not ready), and
 * whether it is going. A ready pod has no problem; its readiness reaches the reconciler through the
 * Deployment's counts.
 */
function podState(obj: ForwardedObject): string {
  const problem = podProblem([obj as PodLike], obj.metadata?.labels?.[POOL_LABEL] ?? '');
  return JSON.stringify([obj.metadata?.deletionTimestamp ?? null, problem ?? null]);
}

/** The state of a pod that is not going and has no problem: a new pod in it is no news. */
const NO_POD_PROBLEM = JSON.stringify([null, null]);

function nodeReady(obj: ForwardedObject): string {
  const ready = (obj.status?.conditions ?? []).find((c) => c.type === 'Ready');
  return String(ready?.status ?? 'Unknown');
}

/** A kind the reconciler renders, watched as metadata only and only when someone else touched it. */
function ownedMetadataResource(namespace: string, kind: ChangeNoticeKind, resource: string): WatchedResource {
  return {
    kind,
    apiVersion: 'v1',
    namespace,
    path: `/api/v1/namespaces/${namespace}/${resource}`,
    labelSelector: OWNED_SELECTOR,
    metadataOnly: true,
    // The NodePool relist already resyncs every pool: a list reports only objects someone else touched.
    listedByRelevance: true,
    summarize: (o) => ({
      ...base(o),
      poolName: poolOfOwned(o),
      state: foreignState(o),
      reconcilerCreated: foreignWriters(o).length === 0,
      ownWrite: ownWrite(o),
    }),
    isRelevant: (before, after) => changedByOthers(before, after) || untracedWrite(before, after),
  };
}

/**
 * When the reconciler last wrote the object: the times of its own entries (not of a subresource). Only its
 * own writes move them; its field sets also shrink when someone else removes a field it owned.
 */
function ownWrite(obj: ForwardedObject): string {
  const own = (obj.metadata?.managedFields ?? []).filter((f) => f.manager === FIELD_MANAGER && !f.subresource);
  return JSON.stringify(own.map((f) => [f.operation, f.time]));
}

/**
 * A change nobody's managedFields entry shows: a field someone else *removed* (a key deleted from a
 * Secret's data, a label taken off). A removal owns nothing, so the remover gets no entry and foreignState
 * cannot see it; the field only drops out of the reconciler's set, its time unchanged. The reconciler's own
 * writes move its time, so a new resourceVersion with that time unchanged is someone else's. (Two of the
 * reconciler's writes in one second look so too: that costs one reconcile that finds nothing to do.)
 */
function untracedWrite(before: ObjectSummary | undefined, after: ObjectSummary | undefined): boolean {
  return (
    before !== undefined &&
    after !== undefined &&
    before.resourceVersion !== after.resourceVersion &&
    before.ownWrite === after.ownWrite
  );
}

/**
 * The NodePool collection in the version the cluster prefers among those the product reads (the one the
 * functions read too: core/nodepool-versions.ts). A cluster that serves none is an error the informer's
 * backoff retries: a forwarder runs for as long as its cluster, and OpenYurt may be installed later.
 */
export async function nodePoolCollectionPath(objects: RawObjectApi, clusterId?: string): Promise<string> {
  return `/apis/${await servedNodePoolApiVersion(objects, clusterId)}/nodepools`;
}

/** The NodePool apiVersion to read and write on a cluster (`apps.openyurt.io/v1beta2`, …). */
export async function servedNodePoolApiVersion(objects: RawObjectApi, clusterId?: string): Promise<string> {
  let doc: unknown;
  try {
    doc = await objects.requestJson<unknown>(HttpMethod.GET, `/apis/${NODEPOOL_GROUP}`);
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 404)) throw err;
  }
  const group = servedGroupOf(doc);
  const choice = chooseNodePoolVersion(group, clusterId);
  if (!choice.ok) throw new NodePoolNotServedError(choice.message, choice.served);
  // The group outlives the NodePool CRD when OpenYurt's other CRDs stay: then the kind is missing from it.
  const resources = await objects.requestJson<{ resources?: Array<{ kind?: unknown }> }>(
    HttpMethod.GET,
    `/apis/${choice.apiVersion}`,
  );
  if (!resources.resources?.some((r) => r.kind === 'NodePool')) {
    const served = group?.versions ?? [];
    throw new NodePoolNotServedError(nodePoolKindMissing(choice.apiVersion, served, clusterId), served);
  }
  return choice.apiVersion;
}

export function watchedResources(namespace: string, clusterId?: string): WatchedResource[] {
  return [
    {
      kind: 'NodePool',
      apiVersion: `${NODEPOOL_GROUP}/v1beta1`,
      // Until the served versions are read: v1beta1 is served by every OpenYurt release from v1.0 on.
      path: `/apis/${NODEPOOL_GROUP}/v1beta1/nodepools`,
      resolvePath: (objects) => nodePoolCollectionPath(objects, clusterId),
      summarize: (o) => ({ ...base(o), poolName: o.metadata?.name }),
      isRelevant: always,
    },
    {
      kind: 'PoolSpirit',
      apiVersion: 'poolspirit.io/v1alpha1',
      path: '/apis/poolspirit.io/v1alpha1/poolspirits',
      summarize: (o) => ({
        ...base(o),
        poolName: o.spec?.nodePool ?? o.metadata?.name,
        state: poolSpiritState(o),
        reconcilerCreated: createdByReconciler(o),
      }),
      // The reconciler's own status writes come back as changes; only a spec change (generation), a
      // deletion or what the agent reports needs another reconcile.
      isRelevant: changedByOthers,
    },
    {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      namespace,
      path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
      labelSelector: OWNED_SELECTOR,
      summarize: (o) => ({
        ...base(o),
        poolName: poolOfOwned(o),
        state: deploymentState(o),
        reconcilerCreated: createdByReconciler(o),
      }),
      // Status writes that change no count (conditions' heartbeat times, collisionCount…) need no reconcile.
      isRelevant: changedByOthers,
    },
    {
      kind: 'Pod',
      apiVersion: 'v1',
      namespace,
      path: `/api/v1/namespaces/${namespace}/pods`,
      // The pods of pool-spirit Deployments carry the template's labels (the pool label among them).
      labelSelector: OWNED_SELECTOR,
      // Why a pod is not ready (unschedulable, crash-looping) is said in the PoolSpirit status: a change of
      // it is worth a reconcile. The reconciler never writes pods, so every change is someone else's.
      summarize: (o) => ({ ...base(o), poolName: o.metadata?.labels?.[POOL_LABEL], state: podState(o) }),
      isRelevant: (before, after) => !after || (before ? before.state !== after.state : after.state !== NO_POD_PROBLEM),
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
    ...OWNED_METADATA_KINDS.map(({ kind, resource }) => ownedMetadataResource(namespace, kind, resource)),
  ];
}
