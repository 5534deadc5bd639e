/**
 * What an OpenYurt install puts on the host cluster for YurtHubs with a coordinator, and the one step of a
 * compat install the reconciler cannot take, applied with admin rights (the local stand-in for `helm install
 * yurthub` and for the operator following docs/yurthub.md). The kube-system objects YurtHubs read are not
 * here: infra/cluster/components/yurt-coordinator-compat installs them with the product and the reconciler
 * fills them, as on a real cluster.
 *
 * - Upstream's `yurt-hub` ClusterRole for system:nodes (charts/yurthub/templates/yurthub-cfg.yaml, v1.5.0)
 *   and its yurt-hub-cfg ConfigMap.
 * - The node-lease-proxy identity's rights: upstream grants get/update on every Lease in the cluster; here a
 *   Role in kube-node-lease only (the leader delegates node heartbeats, nothing else).
 * - The node-lease-proxy client pair, signed by the host CA (on a real cluster: a CertificateSigningRequest
 *   to kubernetes.io/kube-apiserver-client, approved), patched into kube-system/yurt-coordinator-yurthub-certs
 *   under a field manager of its own, so the reconciler's applies leave it alone.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { HttpMethod } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import type { KubeObject } from '../../../core/kube.ts';
import {
  CERTS_SECRET,
  COORDINATOR_NAMESPACE,
  COORDINATOR_PKI_FILES,
  NODE_LEASE_PROXY_GROUP,
  NODE_LEASE_PROXY_USER,
  nodeLeaseProxyData,
} from '../../../core/yurt-coordinator/index.ts';
import { COORDINATOR_PKI_SECRET } from '../../../functions/yurt-coordinator/read.ts';
import type { CertAndKey, CertificateAuthority } from '../pki.ts';
import { issueFromTemplate } from './certs.ts';

const rbac = 'rbac.authorization.k8s.io/v1';

export const UPSTREAM_YURTHUB_HOST_RBAC: KubeObject[] = [
  {
    apiVersion: rbac,
    kind: 'ClusterRole',
    metadata: { name: 'yurt-hub' },
    rules: [
      { apiGroups: [''], resources: ['events'], verbs: ['get'] },
      { apiGroups: ['apps.openyurt.io'], resources: ['nodepools'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['yurt-coordinator-yurthub-certs'],
        verbs: ['list', 'watch'],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['endpoints'], verbs: ['list', 'watch'] },
    ],
  },
  {
    apiVersion: rbac,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'yurt-hub' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'yurt-hub' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
  },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'yurt-hub-cfg', namespace: 'kube-system' },
    data: { cache_agents: '', servicetopology: '', discardcloudservice: '', masterservice: '' },
  },
  {
    apiVersion: rbac,
    kind: 'Role',
    metadata: { name: 'poolspirit:node-lease-proxy', namespace: 'kube-node-lease' },
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
  },
  {
    apiVersion: rbac,
    kind: 'RoleBinding',
    metadata: { name: 'poolspirit:node-lease-proxy', namespace: 'kube-node-lease' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'poolspirit:node-lease-proxy' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: NODE_LEASE_PROXY_USER }],
  },
];

type Obj = Record<string, any>;
const decode = (data: Record<string, string> | undefined) =>
  Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

/** Server-side apply as the field manager `openyurt-install` (admin). */
export async function applyAll(kc: KubeConfig, objects: KubeObject[]): Promise<void> {
  const api = RawObjectApi.fromKubeConfig(kc);
  for (const o of objects) {
    const ns = o.metadata.namespace;
    if (ns)
      await api.applyJson({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, 'openyurt-install', true);
    await api.applyJson(o as never, 'openyurt-install', true);
  }
}

/** The field manager of the operator's node-lease-proxy keys in the certs Secret. */
export const NODE_LEASE_PROXY_MANAGER = 'node-lease-proxy-install';

/** The shared coordinator client identity, as the reconciler issued it in the product namespace. */
export async function readCoordinatorClient(kc: KubeConfig, namespace: string): Promise<CertAndKey> {
  const secret = await RawObjectApi.fromKubeConfig(kc).requestJson<Obj>(
    HttpMethod.GET,
    `/api/v1/namespaces/${namespace}/secrets/${COORDINATOR_PKI_SECRET}`,
  );
  const files = decode(secret.data);
  return { certPem: files[COORDINATOR_PKI_FILES.clientCert]!, keyPem: files[COORDINATOR_PKI_FILES.clientKey]! };
}

/** kube-system/yurt-coordinator-yurthub-certs, decoded (what YurtHubs read). */
export async function readCertsSecret(kc: KubeConfig): Promise<Record<string, string>> {
  const secret = await RawObjectApi.fromKubeConfig(kc).requestJson<Obj>(
    HttpMethod.GET,
    `/api/v1/namespaces/${COORDINATOR_NAMESPACE}/secrets/${CERTS_SECRET}`,
  );
  return decode(secret.data);
}

/** Upstream's host objects for YurtHubs, and the operator's node-lease-proxy keys in the certs Secret. */
export async function installForYurtHubs(kc: KubeConfig, hostCa: CertificateAuthority): Promise<void> {
  await applyAll(kc, UPSTREAM_YURTHUB_HOST_RBAC);
  const nodeLeaseProxy = await issueFromTemplate(hostCa, {
    cn: NODE_LEASE_PROXY_USER,
    orgs: [NODE_LEASE_PROXY_GROUP],
    usage: 'clientAuth',
  });
  // What `kubectl -n kube-system patch secret yurt-coordinator-yurthub-certs --type=merge
  // --field-manager=node-lease-proxy-install -p '{"data": …}'` sends (docs/yurthub.md).
  await RawObjectApi.fromKubeConfig(kc).requestJson(
    HttpMethod.PATCH,
    `/api/v1/namespaces/${COORDINATOR_NAMESPACE}/secrets/${CERTS_SECRET}`,
    {
      body: { data: nodeLeaseProxyData(nodeLeaseProxy) },
      contentType: 'application/merge-patch+json',
      query: { fieldManager: NODE_LEASE_PROXY_MANAGER },
    },
  );
}
