import type { KubeObject } from '../../core/kube.ts';
import type { OpenYurtObservation } from '../../core/nodepool-versions.ts';
import type { JsonPatchOp } from '../../core/render/foreign-entries.ts';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** A core/v1 Event about an object, as the reconcile reports meaningful transitions. */
export interface EventInput {
  involved: KubeObject;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * What the reconcile needs from a cluster's apiserver — nothing more, so tests and the local stack can
 * wrap or fake it. Reads return `undefined` for 404. Every write goes through server-side apply with one
 * field manager, except Events (created), deletes, and the JSON patches that remove what server-side
 * apply cannot: entries other managers added to lists pool-spirit alone decides.
 */
export interface ClusterClient {
  getNodePool(name: string): Promise<KubeObject | undefined>;
  /** NodePools carrying every label in `selector` (all of them without one). */
  listNodePools(selector?: Record<string, string>): Promise<KubeObject[]>;
  /** The NodePool version read on this cluster and every version it serves (discovered once per connection). */
  nodePoolVersions(): Promise<OpenYurtObservation>;
  getPoolSpirit(name: string): Promise<KubeObject | undefined>;
  get(ref: ObjectRef): Promise<KubeObject | undefined>;
  /** Objects of one kind carrying every label in `selector` (paged through). */
  listByLabel(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    selector: Record<string, string>,
  ): Promise<KubeObject[]>;
  /** Server-side apply of a (partial) object; returns the live object after the apply. */
  apply(obj: KubeObject): Promise<KubeObject>;
  /** A JSON patch (RFC 6902) under the reconciler's field manager; returns the live object after it. */
  patchJson(ref: ObjectRef, ops: readonly JsonPatchOp[]): Promise<KubeObject>;
  /** Server-side apply of the status subresource of a PoolSpirit. */
  patchStatus(obj: KubeObject, status: Record<string, unknown>): Promise<KubeObject>;
  /** Deletes an object (background propagation); false when it was already gone. */
  delete(ref: ObjectRef, preconditionUid?: string): Promise<boolean>;
  createEvent(event: EventInput): Promise<void>;
  /** The cluster CA bundle (PEM) from ConfigMap kube-system/kube-root-ca.crt, key ca.crt. */
  readClusterCA(): Promise<string | undefined>;
  /** Requests made through this client, for logs and metrics. */
  readonly counters: { reads: number; writes: number; retries: number };
}
