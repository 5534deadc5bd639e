/**
 * One transport and one discovery cache per cluster connection, reused across invocations of a warm
 * container: the cluster access resolver hands out the same ClusterConnection while it is cached, so a
 * burst of reconciles shares one keep-alive connection and one kind → resource lookup.
 */
import { type ClusterConnection, createKubeTransport, discovery, type KubeTransport } from './http/index.ts';

/** How the functions name themselves to an apiserver (its audit log, our request logs). */
export const RECONCILER_USER_AGENT = 'pool-spirit-reconciler';

/** Server-side apply's content type. */
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** What a client is built on: a connection (transport made and cached here) or a ready transport. */
export type ClusterTarget = ClusterConnection | KubeTransport;

export interface ApiClient {
  transport: KubeTransport;
  path: ReturnType<typeof discovery>['path'];
  group: ReturnType<typeof discovery>['group'];
  forget: ReturnType<typeof discovery>['forget'];
}

const transports = new WeakMap<ClusterConnection, KubeTransport>();

const isTransport = (t: ClusterTarget): t is KubeTransport => typeof (t as KubeTransport).request === 'function';

export function apiClientFor(target: ClusterTarget): ApiClient {
  let transport: KubeTransport | undefined = isTransport(target) ? target : transports.get(target);
  if (!transport) {
    transport = createKubeTransport(target as ClusterConnection, { userAgent: RECONCILER_USER_AGENT });
    transports.set(target as ClusterConnection, transport);
  }
  const found = discovery(transport);
  return {
    transport,
    path: (ref, subresource) => found.path(ref, subresource),
    group: found.group,
    forget: found.forget,
  };
}
