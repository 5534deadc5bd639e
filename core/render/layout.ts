/**
 * Ports and paths inside the pool-spirit pod. High ports, as upstream: with hostNetwork the pod shares the
 * node's ports with the node's own components (6443, 2379, 10250...), and unprivileged ports let every
 * container run as non-root without NET_BIND_SERVICE.
 */
export const APISERVER_PORT = 10270;
export const ETCD_CLIENT_PORT = 12379;
export const ETCD_PEER_PORT = 12380;
export const ETCD_METRICS_PORT = 12381;
/**
 * A yurt-coordinator-compatible pool's etcd as YurtHubs reach it: the etcd proxy, which holds a bounded etcd
 * identity (core/yurt-coordinator/etcd-proxy.ts). etcd itself keeps its client port on loopback.
 */
export const ETCD_PROXY_PORT = 12382;
export const SERVICE_PORT = 443;

export const PKI_DIR = '/etc/kubernetes/pki';
export const ETCD_DATA_MOUNT = '/var/lib/etcd';
/** A directory under the mount, which etcd creates with the 0700 mode it insists on. */
export const ETCD_DATA_DIR = `${ETCD_DATA_MOUNT}/data`;
export const AGENT_KUBECONFIG_DIR = '/etc/poolspirit/kubeconfig';
export const AGENT_KUBECONFIG = `${AGENT_KUBECONFIG_DIR}/kubeconfig`;
/** The agent's etcd client identity (it compacts, defragments and disarms alarms: etcd admin operations). */
export const AGENT_ETCD_PKI_DIR = '/etc/poolspirit/etcd-client';
/** The etcd proxy's certificate, its clients' CA bundle and the etcd CA (compat pools only). */
export const ETCD_PROXY_PKI_DIR = '/etc/poolspirit/etcd-proxy';
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Non-root identity for every container (the distroless "nonroot" user). */
export const RUN_AS_USER = 65532;
