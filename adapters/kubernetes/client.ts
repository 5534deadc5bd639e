/**
 * ClusterClient over @kubernetes/client-node 1.4.
 *
 * Server-side apply with the single field manager `pool-spirit-reconciler` and force=true: the reconciler
 * is the one authority on the fields it renders. Force takes those fields back from anyone who changed
 * them (kubectl edit, another controller) — exactly the drift correction we want — while fields we do not
 * render (an operator's extra labels, HPA-set fields) stay with their managers, untouched. Without force,
 * a single hand edit would block every later reconcile with a 409 conflict that only a human could clear.
 */
import { randomBytes } from 'node:crypto';
import { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { KubeObject } from '../../core/kube.ts';
import { GROUP, KIND, PLURAL, VERSION, API_VERSION } from '../../core/poolspirit/api.ts';
import type { ClusterClient, EventInput, ObjectRef } from './types.ts';
import { RawObjectApi } from './raw-object-api.ts';
import { retryPolicy, statusOf } from './retry.ts';
import type { RetryOptions } from './retry.ts';

export const FIELD_MANAGER = 'pool-spirit-reconciler';
export const NODEPOOL_API_VERSION = 'apps.openyurt.io/v1beta2';
export const CLUSTER_CA_CONFIGMAP = { namespace: 'kube-system', name: 'kube-root-ca.crt', key: 'ca.crt' } as const;
/** Where Events about cluster-scoped objects go (client-go's recorder does the same). */
const CLUSTER_SCOPED_EVENT_NAMESPACE = 'default';

export interface ClusterClientOptions {
  retry?: RetryOptions;
  nodePoolApiVersion?: string;
  /** Name of the Event source component. */
  component?: string;
  now?: () => Date;
}

function isNotFound(err: unknown): boolean {
  return statusOf(err) === 404;
}

/** Responses of CustomObjectsApi are plain already; this only detaches them from the client. */
function plain<T>(obj: T): T {
  return JSON.parse(JSON.stringify(obj)) as T;
}

/**
 * API clients per KubeConfig, reused across invocations of a warm container: KubernetesObjectApi caches
 * discovery (kind → resource) per instance, and a fresh instance per reconcile would repeat it each time.
 * The cluster access resolver hands out the same KubeConfig while it is cached, so this follows its TTL.
 */
const apiClients = new WeakMap<KubeConfig, { objects: RawObjectApi; custom: CustomObjectsApi }>();

function apiClientsFor(kc: KubeConfig) {
  let clients = apiClients.get(kc);
  if (!clients) {
    reuseConnections(kc);
    clients = { objects: RawObjectApi.fromKubeConfig(kc), custom: kc.makeApiClient(CustomObjectsApi) };
    apiClients.set(kc, clients);
  }
  return clients;
}

type AgentFactory = (cluster: unknown, options: Record<string, unknown>) => unknown;

/**
 * client-node 1.4 builds a new http(s) Agent for every request, so each call opens a new connection — a
 * TLS handshake per request against a real apiserver (a reconcile makes ~25 calls). Keep one keep-alive
 * agent per KubeConfig instead, rebuilt only if the TLS material changes. Bearer tokens travel in headers,
 * not in the agent, so a re-signed EKS token does not need a new one. A socket that went stale while the
 * function was frozen fails with ECONNRESET, which the retry policy treats as transient.
 */
function reuseConnections(kc: KubeConfig): void {
  const target = kc as unknown as { createAgent: AgentFactory };
  const original = target.createAgent.bind(kc);
  let cached: { key: string; agent: unknown } | undefined;
  target.createAgent = (cluster, options) => {
    const key = JSON.stringify([options.ca, options.cert, options.key, options.pfx, options.rejectUnauthorized, options.servername].map(String));
    if (cached?.key !== key) cached = { key, agent: original(cluster, { ...options, keepAlive: true }) };
    return cached.agent;
  };
}

export function createClusterClient(kc: KubeConfig, options: ClusterClientOptions = {}): ClusterClient {
  const { objects, custom } = apiClientsFor(kc);
  const counters = { reads: 0, writes: 0, retries: 0 };
  const policy = retryPolicy(options.retry, () => counters.retries++);
  const nodePoolApiVersion = options.nodePoolApiVersion ?? NODEPOOL_API_VERSION;
  const now = options.now ?? (() => new Date());
  const component = options.component ?? FIELD_MANAGER;

  const read = <T>(fn: () => Promise<T>) => {
    counters.reads++;
    return policy.execute(fn) as Promise<T>;
  };
  const write = <T>(fn: () => Promise<T>) => {
    counters.writes++;
    return policy.execute(fn) as Promise<T>;
  };

  async function get(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      const obj = await read(() =>
        objects.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } }),
      );
      return obj as KubeObject;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async function listByLabel(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    selector: Record<string, string>,
  ): Promise<KubeObject[]> {
    const labelSelector = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(',') || undefined;
    const items: KubeObject[] = [];
    let continueToken: string | undefined;
    do {
      const page = await read(() =>
        objects.list(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, labelSelector, 500, continueToken),
      );
      for (const item of page.items) items.push({ ...(item as KubeObject), apiVersion, kind });
      // Raw JSON carries `continue`; the typed models call it `_continue`.
      continueToken = (page.metadata as { continue?: string } | undefined)?.continue || page.metadata?._continue || undefined;
    } while (continueToken);
    return items;
  }

  return {
    counters,
    getNodePool: (name) => get({ apiVersion: nodePoolApiVersion, kind: 'NodePool', name }),
    listNodePools: () => listByLabel(nodePoolApiVersion, 'NodePool', undefined, {}),
    getPoolSpirit: (name) => get({ apiVersion: API_VERSION, kind: KIND, name }),
    get,
    listByLabel,

    async apply(obj) {
      return (await write(() => objects.applyJson(obj as KubernetesObject, FIELD_MANAGER, true))) as KubeObject;
    },

    async patchStatus(obj, status) {
      if (obj.kind !== KIND) throw new TypeError(`patchStatus: only ${KIND} status is written, got ${obj.kind}`);
      const body = { apiVersion: API_VERSION, kind: KIND, metadata: { name: obj.metadata.name }, status };
      const out = await write(() =>
        custom.patchClusterCustomObjectStatus(
          { group: GROUP, version: VERSION, plural: PLURAL, name: obj.metadata.name, body, fieldManager: FIELD_MANAGER, force: true },
          setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
        ),
      );
      return plain(out) as KubeObject;
    },

    async delete(ref, preconditionUid) {
      try {
        await write(() =>
          objects.delete(
            { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } },
            undefined,
            undefined,
            undefined,
            undefined,
            'Background',
            preconditionUid ? { preconditions: { uid: preconditionUid } } : undefined,
          ),
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
      try {
        await write(() => objects.createJson(body as KubernetesObject, FIELD_MANAGER));
      } catch (err) {
        if (statusOf(err) !== 409) throw err;
      }
    },

    async readClusterCA() {
      const cm = await get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: CLUSTER_CA_CONFIGMAP.namespace, name: CLUSTER_CA_CONFIGMAP.name });
      const data = cm?.data as Record<string, string> | undefined;
      return data?.[CLUSTER_CA_CONFIGMAP.key];
    },
  };
}

export { ApiException };
