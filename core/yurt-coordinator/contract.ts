/**
 * What a YurtHub of OpenYurt v1.4 – v1.6.0 expects of its yurt-coordinator, read from the v1.5.0 source
 * (cmd/yurthub/app/options, cmd/yurthub/app/start.go, pkg/yurthub/yurtcoordinator). Later YurtHubs
 * (v1.6.1+) have no coordinator client at all.
 *
 * - Flags `--enable-coordinator`, `--coordinator-server-addr` (default https://yurt-coordinator-apiserver:443),
 *   `--coordinator-storage-addr` (default https://yurt-coordinator-etcd:2379), `--coordinator-storage-prefix`
 *   (default /registry). A host name is looked up as a Service of that name in kube-system on the host
 *   cluster (its spec.clusterIP, the port from the flag); an IP address is used as is.
 * - Certificates come from the host Secret kube-system/yurt-coordinator-yurthub-certs: `ca.crt` verifies
 *   both the coordinator apiserver and its etcd; `yurt-coordinator-yurthub-client.{crt,key}` is the client
 *   identity for both; `node-lease-proxy-client.{crt,key}` (signed by the host cluster's CA) is what the
 *   leader uses to write the delegated node Leases to the host.
 * - Leader election on Lease kube-system/yurthub in the coordinator apiserver (15 s / 10 s / 2 s), identity
 *   the node name; the leader keeps Lease kube-system/leader-informer-sync fresh (every 10 s; stale after
 *   30 s) and writes pool-scoped objects straight into the coordinator's etcd under the storage prefix.
 */
export const COORDINATOR_NAMESPACE = 'kube-system';
export const APISERVER_SERVICE = 'yurt-coordinator-apiserver';
export const APISERVER_SERVICE_PORT = 443;
export const ETCD_SERVICE = 'yurt-coordinator-etcd';
export const ETCD_SERVICE_PORT = 2379;
export const STORAGE_PREFIX = '/registry';
export const CERTS_SECRET = 'yurt-coordinator-yurthub-certs';
export const CERTS_SECRET_KEYS = {
  ca: 'ca.crt',
  clientCert: 'yurt-coordinator-yurthub-client.crt',
  clientKey: 'yurt-coordinator-yurthub-client.key',
  nodeLeaseProxyCert: 'node-lease-proxy-client.crt',
  nodeLeaseProxyKey: 'node-lease-proxy-client.key',
} as const;
/** Upstream's Services carry it so YurtHub's service-topology filter keeps only the pool's own endpoints. */
export const TOPOLOGY_ANNOTATION = 'openyurt.io/topologyKeys';
export const TOPOLOGY_POOL = 'openyurt.io/nodepool';
export const LEADER_LEASE = { namespace: 'kube-system', name: 'yurthub' } as const;
export const INFORMER_SYNC_LEASE = { namespace: 'kube-system', name: 'leader-informer-sync' } as const;
/** Upstream's yurt-coordinator etcd flags for the leader's large pool-cache transactions. */
export const ETCD_TXN_FLAGS: Array<[string, string]> = [
  ['max-txn-ops', '102400'],
  ['max-request-bytes', '100000000'],
];
/** The host-side identity upstream's yurt-manager requests for the leader's delegated node heartbeats. */
export const NODE_LEASE_PROXY_USER = 'openyurt:yurt-coordinator:node-lease-proxy-client';
export const NODE_LEASE_PROXY_GROUP = 'openyurt:yurt-coordinator';
/** The first argument that makes the agent image run the etcd proxy instead of the agent (agent/main.ts). */
export const ETCD_PROXY_COMMAND = 'etcd-proxy';
