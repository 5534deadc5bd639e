import type { ResolvedPoolSpiritSpec } from '../poolspirit/resolved.ts';
import { buildArgs } from './args.ts';
import {
  AGENT_ETCD_PKI_DIR,
  AGENT_KUBECONFIG,
  AGENT_KUBECONFIG_DIR,
  APISERVER_PORT,
  ETCD_CLIENT_PORT,
  ETCD_DATA_DIR,
  ETCD_DATA_MOUNT,
  ETCD_METRICS_PORT,
  ETCD_PEER_PORT,
  PKI_DIR,
  SERVICE_ACCOUNT_DIR,
} from './layout.ts';
import { certFile, keyFile, PKI_FILES } from './pki.ts';

type Container = Record<string, unknown>;

export const VOLUMES = {
  apiserverPki: 'apiserver-pki',
  etcdPki: 'etcd-pki',
  etcdData: 'etcd-data',
  agentKubeconfig: 'agent-kubeconfig',
  agentEtcdClient: 'agent-etcd-client',
  agentToken: 'agent-token',
} as const;

/** As restricted as each component allows; none of the containers needs an exception. */
export const CONTAINER_SECURITY_CONTEXT = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

const pki = (file: string) => `${PKI_DIR}/${file}`;

export interface ContainerContext {
  spec: ResolvedPoolSpiritSpec;
  poolSpiritName: string;
  namespace: string;
  bootstrapConfigMap: string;
  clusterDomain: string;
  /** With hostNetwork the etcd metrics listener stays on loopback and probes target 127.0.0.1. */
  hostNetwork: boolean;
}

export function apiServerContainer(ctx: ContainerContext): Container {
  const c = ctx.spec.apiServer;
  const probe = (path: string, extra: Record<string, number>) => ({
    httpGet: { path, port: APISERVER_PORT, scheme: 'HTTPS' },
    ...extra,
  });
  return {
    name: 'kube-apiserver',
    image: c.image,
    command: ['kube-apiserver'],
    args: buildArgs(
      [
        ['secure-port', String(APISERVER_PORT)],
        ['bind-address', '0.0.0.0'],
        ['etcd-servers', `https://127.0.0.1:${ETCD_CLIENT_PORT}`],
        ['etcd-cafile', pki(PKI_FILES.etcdCaCert)],
        ['etcd-certfile', pki(certFile('apiserver-etcd-client'))],
        ['etcd-keyfile', pki(keyFile('apiserver-etcd-client'))],
        ['tls-cert-file', pki(certFile('apiserver'))],
        ['tls-private-key-file', pki(keyFile('apiserver'))],
        ['client-ca-file', pki('client-ca.crt')],
        // RBAC alone, no NodeRestriction: YurtHubs present node certificates, and on the real apiserver the
        // Node authorizer grants them the kubelet's rules (pods, any node's Lease, ...) while NodeRestriction
        // refuses the leader Lease kube-system/yurthub ("can only access leases in the kube-node-lease
        // namespace"), which is the pool-spirit's purpose. RBAC gives them exactly poolspirit:yurthub.
        ['authorization-mode', 'RBAC'],
        ['anonymous-auth', 'true'],
        ['service-account-key-file', pki(PKI_FILES.saPublic)],
        ['service-account-signing-key-file', pki(PKI_FILES.saPrivate)],
        ['service-account-issuer', `https://kubernetes.default.svc.${ctx.clusterDomain}`],
        ['service-cluster-ip-range', '10.96.0.0/12'],
        ['allow-privileged', 'false'],
        ['profiling', 'false'],
        // Memory (decision 0008): a pool serves v1, coordination (YurtHub's Leases), discovery, RBAC and
        // the apiserver's own groups; every other group costs its storage, watch cache and OpenAPI share
        // (-50 MiB idle on the real binary), and its admission plugins would wait on informers of a group
        // that is off. networking.k8s.io stays: the apiserver's ServiceCIDR controller needs it to be ready.
        [
          'runtime-config',
          'apps/v1=false,batch/v1=false,autoscaling/v1=false,autoscaling/v2=false,policy/v1=false,storage.k8s.io/v1=false,node.k8s.io/v1=false,certificates.k8s.io/v1=false,resource.k8s.io/v1=false',
        ],
        [
          'disable-admission-plugins',
          'DefaultStorageClass,StorageObjectInUseProtection,PersistentVolumeClaimResize,RuntimeClass,CertificateApproval,CertificateSigning,CertificateSubjectRestriction,ClusterTrustBundleAttest',
        ],
        // Nothing in a pool watches Pods or Events (poolspirit:yurthub grants no access to either): without
        // a watch cache they are not also held decoded in the apiserver's memory; reads go to etcd.
        ['watch-cache-sizes', 'pods#0,events#0'],
      ],
      c.extraArgs,
    ),
    ports: [{ name: 'https', containerPort: APISERVER_PORT, protocol: 'TCP' }],
    startupProbe: probe('/livez', { periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 24 }),
    livenessProbe: probe('/livez', { periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 }),
    readinessProbe: probe('/readyz', { periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 3 }),
    resources: c.resources,
    securityContext: CONTAINER_SECURITY_CONTEXT,
    volumeMounts: [{ name: VOLUMES.apiserverPki, mountPath: PKI_DIR, readOnly: true }],
  };
}

export function etcdContainer(ctx: ContainerContext): Container {
  const c = ctx.spec.etcd;
  const s = c.storage;
  const metricsHost = ctx.hostNetwork ? '127.0.0.1' : '0.0.0.0';
  const probe = (path: string, extra: Record<string, number>) => ({
    httpGet: { path, port: ETCD_METRICS_PORT, scheme: 'HTTP', ...(ctx.hostNetwork ? { host: '127.0.0.1' } : {}) },
    ...extra,
  });
  return {
    name: 'etcd',
    image: c.image,
    command: ['etcd'],
    args: buildArgs(
      [
        ['name', 'poolspirit'],
        ['data-dir', ETCD_DATA_DIR],
        ['listen-client-urls', `https://127.0.0.1:${ETCD_CLIENT_PORT}`],
        ['advertise-client-urls', `https://127.0.0.1:${ETCD_CLIENT_PORT}`],
        ['listen-peer-urls', `https://127.0.0.1:${ETCD_PEER_PORT}`],
        ['initial-advertise-peer-urls', `https://127.0.0.1:${ETCD_PEER_PORT}`],
        ['initial-cluster', `poolspirit=https://127.0.0.1:${ETCD_PEER_PORT}`],
        ['initial-cluster-state', 'new'],
        ['listen-metrics-urls', `http://${metricsHost}:${ETCD_METRICS_PORT}`],
        ['cert-file', pki(certFile('etcd-server'))],
        ['key-file', pki(keyFile('etcd-server'))],
        ['trusted-ca-file', pki(PKI_FILES.etcdCaCert)],
        ['client-cert-auth', 'true'],
        ['peer-cert-file', pki(certFile('etcd-peer'))],
        ['peer-key-file', pki(keyFile('etcd-peer'))],
        ['peer-trusted-ca-file', pki(PKI_FILES.etcdCaCert)],
        ['peer-client-cert-auth', 'true'],
        ['quota-backend-bytes', String(s.quotaBackendBytes)],
        ['auto-compaction-mode', s.autoCompaction.mode],
        ['auto-compaction-retention', s.autoCompaction.retention],
        ['snapshot-count', String(s.snapshotCount)],
        ['max-wals', String(s.maxWals)],
        ['max-snapshots', String(s.maxSnapshots)],
      ],
      c.extraArgs,
    ),
    ports: [{ name: 'etcd-metrics', containerPort: ETCD_METRICS_PORT, protocol: 'TCP' }],
    // As kubeadm: liveness ignores the NOSPACE alarm (restarting etcd does not clear it; the agent does),
    // startup needs a linearizable read so the member is really serving.
    startupProbe: probe('/health?serializable=false', { periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 24 }),
    livenessProbe: probe('/health?exclude=NOSPACE&serializable=true', {
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 6,
    }),
    resources: c.resources,
    securityContext: CONTAINER_SECURITY_CONTEXT,
    volumeMounts: [
      { name: VOLUMES.etcdData, mountPath: ETCD_DATA_MOUNT },
      { name: VOLUMES.etcdPki, mountPath: PKI_DIR, readOnly: true },
    ],
  };
}

export function agentContainer(ctx: ContainerContext): Container {
  const c = ctx.spec.agent;
  const metrics = `http://127.0.0.1:${ETCD_METRICS_PORT}/health`;
  return {
    name: 'agent',
    image: c.image,
    args: buildArgs(
      [
        ['kubeconfig', AGENT_KUBECONFIG],
        ['pool', ctx.spec.nodePool],
        ['poolspirit', ctx.poolSpiritName],
        ['namespace', ctx.namespace],
        ['bootstrap-configmap', ctx.bootstrapConfigMap],
        ['etcd-health-url', metrics],
        // Status, alarms and defragmentation need etcd's gRPC API; the health URL alone says only up/down.
        ['etcd-endpoints', `https://127.0.0.1:${ETCD_CLIENT_PORT}`],
        ['etcd-ca-file', `${AGENT_ETCD_PKI_DIR}/${PKI_FILES.etcdCaCert}`],
        ['etcd-cert-file', `${AGENT_ETCD_PKI_DIR}/${certFile('apiserver-etcd-client')}`],
        ['etcd-key-file', `${AGENT_ETCD_PKI_DIR}/${keyFile('apiserver-etcd-client')}`],
        ['etcd-quota-bytes', String(ctx.spec.etcd.storage.quotaBackendBytes)],
      ],
      c.extraArgs,
    ),
    env: [
      { name: 'POOL_NAME', value: ctx.spec.nodePool },
      { name: 'POOLSPIRIT_NAME', value: ctx.poolSpiritName },
      { name: 'BOOTSTRAP_CONFIGMAP', value: ctx.bootstrapConfigMap },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    resources: c.resources,
    securityContext: CONTAINER_SECURITY_CONTEXT,
    volumeMounts: [
      { name: VOLUMES.agentKubeconfig, mountPath: AGENT_KUBECONFIG_DIR, readOnly: true },
      { name: VOLUMES.agentEtcdClient, mountPath: AGENT_ETCD_PKI_DIR, readOnly: true },
      { name: VOLUMES.agentToken, mountPath: SERVICE_ACCOUNT_DIR, readOnly: true },
    ],
  };
}
