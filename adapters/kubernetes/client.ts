/**
 * ClusterClient over the project's small apiserver client (./http): JSON in and out exactly as the
 * apiserver speaks it, one keep-alive connection per cluster, and no generated model layer — the functions'
 * bundles stay small and load fast (docs/deploy.md, "Bundle size and load time").
 *
 * Server-side apply with the single field manager `pool-spirit-reconciler` and force=true: the reconciler
 * is the one authority on the fields it renders. Force takes those fields back from anyone who changed
 * them (kubectl edit, another controller) — exactly the drift correction we want — while fields we do not
 * render (an operator's extra labels, HPA-set fields) stay with their managers, untouched. Without force,
 * a single hand edit would block every later reconcile with a 409 conflict that only a human could clear.
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../core/kube.ts';
import {
  chooseNodePoolVersion,
  NODEPOOL_GROUP,
  nodePoolKindMissing,
  servedGroupOf,
} from '../../core/nodepool-versions.ts';
import { API_VERSION, KIND } from '../../core/poolspirit/names.ts';
import { invocationSignal } from '../invocation-signal.ts';
import { APPLY_PATCH, apiClientFor, type ClusterTarget } from './api-client.ts';
import type { KubeTransport } from './http/index.ts';
import { UnknownKindError } from './http/index.ts';
import type { RetryOptions } from './retry.ts';
import { retryPolicy, statusOf } from './retry.ts';
import type { ClusterClient, EventInput, ObjectRef } from './types.ts';

export const FIELD_MANAGER = 'pool-spirit-reconciler';
export const CLUSTER_CA_CONFIGMAP = { namespace: 'kube-system', name: 'kube-root-ca.crt', key: 'ca.crt' } as const;
/** Where Events about cluster-scoped objects go (client-go's recorder does the same). */
const CLUSTER_SCOPED_EVENT_NAMESPACE = 'default';
const PAGE_SIZE = 500;
const JSON_PATCH = 'application/json-patch+json';

/**
 * The cluster serves no NodePool version the product reads (core/nodepool-versions.ts): no pass can succeed
 * until its CRDs change, so the functions treat it as terminal (functions/common/terminal.ts).
 */
export class NodePoolNotServedError extends Error {
  override name = 'NodePoolNotServedError';
  readonly served: string[];
  constructor(message: string, served: string[]) {
    super(message);
    this.served = served;
  }
}

export interface ClusterClientOptions {
  retry?: RetryOptions;
  /** Names the cluster in errors. */
  clusterId?: string;
  /** A fixed NodePool apiVersion; by default the one the cluster prefers among those read (discovered). */
  nodePoolApiVersion?: string;
  /** Name of the Event source component. */
  component?: string;
  now?: () => Date;
}

const isNotFound = (err: unknown) => statusOf(err) === 404;

/**
 * The cluster CA changes only when the cluster's CA is rotated, and no notice announces that (the
 * forwarder does not watch kube-system; the scheduled audit compares it): read afresh on every pass, it
 * was one GET in twelve of a pass and never news. It is kept with the connection it was read through
 * (cluster access caches one for 5 minutes), and never longer than this.
 */
export const CLUSTER_CA_TTL_MS = 5 * 60_000;
const clusterCas = new WeakMap<KubeTransport, { pem: string; until: number }>();

export function createClusterClient(target: ClusterTarget, options: ClusterClientOptions = {}): ClusterClient {
  const api = apiClientFor(target);
  const counters = { reads: 0, writes: 0, retries: 0 };
  const policy = retryPolicy(options.retry, () => counters.retries++);
  const now = options.now ?? (() => new Date());
  const component = options.component ?? FIELD_MANAGER;

  // Each attempt's signal follows the invocation's deadline (adapters/invocation-signal.ts): past it no
  // request starts (nor a retry), and one in flight is aborted.
  const send = async <T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    (await policy.execute(({ signal }) => {
      invocationSignal();
      return fn(signal);
    }, invocationSignal())) as T;
  const read = <T>(fn: (signal: AbortSignal) => Promise<T>) => {
    counters.reads++;
    return send(fn);
  };
  const write = <T>(fn: (signal: AbortSignal) => Promise<T>) => {
    counters.writes++;
    return send(fn);
  };

  function get(ref: ObjectRef): Promise<KubeObject | undefined> {
    return read(async (signal) =>
      api.transport.request<KubeObject | undefined>({
        method: 'GET',
        path: await api.path(ref),
        signal,
        notFound: 'absent',
      }),
    );
  }

  async function listByLabel(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    selector: Record<string, string>,
  ): Promise<KubeObject[]> {
    const labelSelector =
      Object.entries(selector)
        .map(([k, v]) => `${k}=${v}`)
        .join(',') || undefined;
    const items: KubeObject[] = [];
    let continueToken: string | undefined;
    do {
      const page = await read(async (signal) =>
        api.transport.request<{ items?: KubeObject[]; metadata?: { continue?: string } }>({
          method: 'GET',
          path: await api.path({ apiVersion, kind, namespace }),
          query: { labelSelector, limit: PAGE_SIZE, continue: continueToken },
          signal,
        }),
      );
      // List items carry no apiVersion/kind of their own.
      for (const item of page.items ?? []) items.push({ ...item, apiVersion, kind });
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return items;
  }

  async function nodePoolVersion(fresh: boolean): Promise<{ apiVersion: string; served: string[] }> {
    if (options.nodePoolApiVersion) return { apiVersion: options.nodePoolApiVersion, served: [] };
    const group = servedGroupOf(await api.group(NODEPOOL_GROUP, fresh));
    const choice = chooseNodePoolVersion(group, options.clusterId);
    if (!choice.ok) throw new NodePoolNotServedError(choice.message, choice.served);
    return { apiVersion: choice.apiVersion, served: group?.versions ?? [] };
  }

  /**
   * With the cluster's NodePool version. A pool read as absent, or the kind unknown at that version, is
   * believed only after what the cluster serves is read afresh (its group and that version's kinds): a
   * version no longer served answers 404 like a deleted pool, and a pool wrongly read as gone would be
   * cleaned up. Found unserved then, the cluster cannot be reconciled: NodePoolNotServedError.
   */
  async function withNodePoolVersion<T>(fn: (apiVersion: string) => Promise<T>): Promise<T> {
    if (options.nodePoolApiVersion) return fn(options.nodePoolApiVersion);
    const first = await nodePoolVersion(false);
    try {
      const result = await fn(first.apiVersion);
      if (result !== undefined) return result;
    } catch (err) {
      if (!(err instanceof UnknownKindError)) throw err;
    }
    api.forget(first.apiVersion);
    const again = await nodePoolVersion(true);
    try {
      return await fn(again.apiVersion);
    } catch (err) {
      if (!(err instanceof UnknownKindError)) throw err;
      const message = nodePoolKindMissing(again.apiVersion, again.served, options.clusterId);
      throw new NodePoolNotServedError(message, again.served);
    }
  }

  return {
    counters,
    getNodePool: (name) => withNodePoolVersion((apiVersion) => get({ apiVersion, kind: 'NodePool', name })),
    listNodePools: (selector = {}) =>
      withNodePoolVersion((apiVersion) => listByLabel(apiVersion, 'NodePool', undefined, selector)),
    async nodePoolVersions() {
      const { apiVersion, served } = await nodePoolVersion(false);
      return { nodePoolApiVersion: apiVersion, nodePoolVersions: served };
    },
    getPoolSpirit: (name) => get({ apiVersion: API_VERSION, kind: KIND, name }),
    get,
    listByLabel,

    async apply(obj) {
      return write(async (signal) =>
        api.transport.request<KubeObject>({
          method: 'PATCH',
          path: await api.path(refOf(obj)),
          query: { fieldManager: FIELD_MANAGER, force: true },
          body: obj,
          contentType: APPLY_PATCH,
          signal,
        }),
      );
    },

    async patchJson(ref, ops) {
      return write(async (signal) =>
        api.transport.request<KubeObject>({
          method: 'PATCH',
          path: await api.path(ref),
          query: { fieldManager: FIELD_MANAGER },
          body: ops,
          contentType: JSON_PATCH,
          signal,
        }),
      );
    },

    async patchStatus(obj, status) {
      if (obj.kind !== KIND) throw new TypeError(`patchStatus: only ${KIND} status is written, got ${obj.kind}`);
      const body = { apiVersion: API_VERSION, kind: KIND, metadata: { name: obj.metadata.name }, status };
      return write(async (signal) =>
        api.transport.request<KubeObject>({
          method: 'PATCH',
          path: await api.path(refOf(obj), 'status'),
          query: { fieldManager: FIELD_MANAGER, force: true },
          body,
          contentType: APPLY_PATCH,
          signal,
        }),
      );
    },

    async delete(ref, preconditionUid) {
      const body = {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Background',
        ...(preconditionUid ? { preconditions: { uid: preconditionUid } } : {}),
      };
      try {
        await write(async (signal) =>
          api.transport.request({ method: 'DELETE', path: await api.path(ref), body, signal }),
        );
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },

    async createEvent(event: EventInput) {
      const involved = event.involved;
      const namespace = involved.metadata.namespace ?? CLUSTER_SCOPED_EVENT_NAMESPACE;
      const at = now();
      const time = at.toISOString();
      const body = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {
          // client-go names Events <object>.<hex nanos>; a random suffix keeps two in one ms apart.
          name: `${involved.metadata.name}.${(BigInt(at.getTime()) * 1_000_000n).toString(16)}${randomBytes(2).toString('hex')}`,
          namespace,
        },
        involvedObject: {
          apiVersion: involved.apiVersion,
          kind: involved.kind,
          name: involved.metadata.name,
          namespace: involved.metadata.namespace,
          uid: involved.metadata.uid,
          resourceVersion: involved.metadata.resourceVersion,
        },
        type: event.type,
        reason: event.reason,
        message: event.message.slice(0, 1024),
        source: { component },
        reportingComponent: component,
        reportingInstance: component,
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      };
      const eventsPath = { apiVersion: 'v1', kind: 'Event', namespace };
      try {
        await write(async (signal) =>
          api.transport.request({
            method: 'POST',
            path: await api.path(eventsPath),
            query: { fieldManager: FIELD_MANAGER },
            body,
            signal,
          }),
        );
      } catch (err) {
        if (statusOf(err) !== 409) throw err;
      }
    },

    async readClusterCA() {
      const cached = clusterCas.get(api.transport);
      if (cached && cached.until > now().getTime()) return cached.pem;
      const cm = await get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: CLUSTER_CA_CONFIGMAP.namespace,
        name: CLUSTER_CA_CONFIGMAP.name,
      });
      const pem = (cm?.data as Record<string, string> | undefined)?.[CLUSTER_CA_CONFIGMAP.key];
      // A missing CA is not remembered: the pass that found none fails, and the next one looks again.
      if (pem) clusterCas.set(api.transport, { pem, until: now().getTime() + CLUSTER_CA_TTL_MS });
      return pem;
    },
  };
}

const refOf = (obj: KubeObject): ObjectRef => ({
  apiVersion: obj.apiVersion,
  kind: obj.kind,
  name: obj.metadata.name,
  namespace: obj.metadata.namespace,
});
