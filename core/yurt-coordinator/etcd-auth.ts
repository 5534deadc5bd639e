import { APISERVER_ETCD_CLIENT_USER } from '../render/pki-spec.ts';
import { STORAGE_PREFIX } from './contract.ts';

/**
 * etcd auth in a yurt-coordinator-compatible pool (docs/decisions/0024-coordinator-etcd-auth.md). YurtHubs
 * reach etcd only through the etcd proxy, which presents its own certificate; etcd names a client by its
 * certificate's CN, so the proxy's CN is the etcd user every hub request runs as.
 */
export const COORDINATOR_ETCD_PROXY_USER = 'poolspirit:yurt-coordinator-etcd-proxy';
/** One role per bounded user, named after it. */
export const COORDINATOR_ETCD_ROLE = COORDINATOR_ETCD_PROXY_USER;

/**
 * The keys a YurtHub v1.5.0 reads and writes in the coordinator's etcd (pkg/yurthub/storage/etcd), with
 * `--coordinator-storage-prefix=/registry`:
 * - the pool-scoped cache the leader writes (yurtcoordinator/resources: endpoints, endpointslices v1 and
 *   v1beta1), one key per object at KeyFunc's path (`endpoints` is stored under `services/endpoints`, as
 *   kube-apiserver does), listed by prefix from the bare resource root (keycache.go), so the root has no
 *   trailing slash;
 * - what a hub uploads from its own disk cache when the coordinator becomes usable (yurtcoordinator/constants
 *   UploadResourcesKeyBuildInfo: the kubelet's pods and nodes; nodes are `minions` in etcd), written by exact
 *   key only;
 * - the resourceVersion mirror of each of those keys, `/mirror/rv` + the key, compared in every transaction.
 * Pool-scoped resources added through yurt-hub-cfg's `poolScopeResources` are not granted: a hub configured
 * with more is refused those keys.
 */
const POOL_SCOPED_ROOTS = ['services/endpoints', 'endpointslices'];
const UPLOADED_ROOTS = ['pods/', 'minions/'];
const MIRROR_PREFIX = '/mirror/rv';

export const COORDINATOR_ETCD_PREFIXES: readonly string[] = [...POOL_SCOPED_ROOTS, ...UPLOADED_ROOTS].flatMap(
  (root) => [`${STORAGE_PREFIX}/${root}`, `${MIRROR_PREFIX}${STORAGE_PREFIX}/${root}`],
);

/**
 * The users etcd must know before auth goes on: `root` (etcd refuses to enable auth without it), the
 * apiserver/agent client identity with the root role (kube-apiserver and the agent keep full access), and
 * the proxy's user with a role holding only COORDINATOR_ETCD_PREFIXES (readwrite).
 */
export const COORDINATOR_ETCD_ROOT_USERS: readonly string[] = [APISERVER_ETCD_CLIENT_USER];

/** The agent flags that make it set this up (agent/options.ts). */
export function coordinatorEtcdAuthArgs(): string[] {
  return [
    `--etcd-auth-root-users=${COORDINATOR_ETCD_ROOT_USERS.join(',')}`,
    `--etcd-auth-limited-user=${COORDINATOR_ETCD_PROXY_USER}`,
    `--etcd-auth-limited-prefixes=${COORDINATOR_ETCD_PREFIXES.join(',')}`,
  ];
}
