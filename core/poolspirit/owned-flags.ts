import type { ComponentName } from './api.ts';

/**
 * Flags the product sets itself and that extraArgs may not override, each with the reason given to the
 * person who tried. Overriding any of them would cut the pool-spirit off its own certificates, its
 * in-memory etcd, its Service or its security model, and the reconciler could no longer keep it right.
 */
const CERTS = 'certificates and keys are issued and rotated per pool by pool-spirit';
const ETCD_LINK = 'the apiserver only talks to its own etcd, over TLS on 127.0.0.1';
const PORTS = 'the Service, the probes and the agent depend on it';
const AUTHZ =
  'YurtHubs (group system:nodes) are authorised by RBAC alone, to exactly the poolspirit:yurthub role; another mode would grant them more or expose pool data';
const TOPOLOGY = 'etcd is a single in-memory member inside the pool-spirit pod';
const DATA = 'etcd data lives on the in-memory volume pool-spirit sizes and limits';

export const OWNED_FLAGS: Record<ComponentName, Record<string, string>> = {
  apiServer: {
    'etcd-servers': ETCD_LINK,
    'etcd-cafile': ETCD_LINK,
    'etcd-certfile': ETCD_LINK,
    'etcd-keyfile': ETCD_LINK,
    'secure-port': PORTS,
    'bind-address': PORTS,
    'tls-cert-file': CERTS,
    'tls-private-key-file': CERTS,
    'tls-sni-cert-key': CERTS,
    'cert-dir': CERTS,
    'client-ca-file': `${CERTS}; it trusts the cluster CA (node certificates) plus the pool CA`,
    'requestheader-client-ca-file': 'front-proxy authentication is not used: it would let a proxy assert any user',
    'token-auth-file': 'static tokens would bypass the per-pool certificates',
    'service-account-key-file': CERTS,
    'service-account-signing-key-file': CERTS,
    'service-account-issuer': CERTS,
    'authorization-mode': AUTHZ,
    'enable-admission-plugins':
      'NodeRestriction would refuse YurtHub the leader Lease kube-system/yurthub; no other admission plugin is needed in a pool-spirit',
    'anonymous-auth':
      'the kubelet probes /livez and /readyz anonymously; RBAC limits anonymous users to health endpoints',
  },
  etcd: {
    name: TOPOLOGY,
    'data-dir': DATA,
    'wal-dir': DATA,
    'listen-client-urls': ETCD_LINK,
    'advertise-client-urls': ETCD_LINK,
    'listen-peer-urls': TOPOLOGY,
    'initial-advertise-peer-urls': TOPOLOGY,
    'initial-cluster': TOPOLOGY,
    'initial-cluster-state': TOPOLOGY,
    'initial-cluster-token': TOPOLOGY,
    'listen-metrics-urls': PORTS,
    'cert-file': CERTS,
    'key-file': CERTS,
    'trusted-ca-file': CERTS,
    'client-cert-auth': CERTS,
    'peer-cert-file': CERTS,
    'peer-key-file': CERTS,
    'peer-trusted-ca-file': CERTS,
    'peer-client-cert-auth': CERTS,
    'auto-tls': CERTS,
    'peer-auto-tls': CERTS,
  },
  agent: {
    kubeconfig: 'the agent reaches its apiserver with the per-pool kubeconfig pool-spirit mounts',
    pool: 'set from spec.nodePool',
    poolspirit: 'set from the PoolSpirit name',
    namespace: 'set from the namespace pool-spirit deploys into',
    'bootstrap-configmap': 'set to the bootstrap ConfigMap pool-spirit renders',
    'etcd-health-url': PORTS,
  },
};

/** etcd flags that have a first-class field under spec.etcd.storage: the error points there. */
export const STORAGE_FLAGS: Record<string, string> = {
  'quota-backend-bytes': 'spec.etcd.storage.quotaBackendBytes',
  'auto-compaction-mode': 'spec.etcd.storage.autoCompaction.mode',
  'auto-compaction-retention': 'spec.etcd.storage.autoCompaction.retention',
  'snapshot-count': 'spec.etcd.storage.snapshotCount',
  'max-wals': 'spec.etcd.storage.maxWals',
  'max-snapshots': 'spec.etcd.storage.maxSnapshots',
};

/** Why a flag may not be set through extraArgs, or undefined when it may. */
export function ownedFlagReason(component: ComponentName, flag: string): string | undefined {
  // Own keys only: `flag in …` would also find Object.prototype members such as "constructor".
  if (component === 'etcd' && Object.hasOwn(STORAGE_FLAGS, flag)) return `set ${STORAGE_FLAGS[flag]} instead`;
  return Object.hasOwn(OWNED_FLAGS[component], flag) ? OWNED_FLAGS[component][flag] : undefined;
}
