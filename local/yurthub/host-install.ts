/**
 * What an OpenYurt install puts on the host cluster for YurtHubs with a coordinator, and what the product
 * adds for compat pools, applied with admin rights (the local stand-in for `helm install yurthub` and for the
 * cluster-wide half of core/yurt-coordinator, which the reconciler does not yet write: docs/yurthub.md).
 *
 * - Upstream's `yurt-hub` ClusterRole for system:nodes (charts/yurthub/templates/yurthub-cfg.yaml, v1.5.0)
 *   and its yurt-hub-cfg ConfigMap.
 * - The node-lease-proxy identity's rights: upstream grants get/update on every Lease in the cluster; here a
 *   Role in kube-node-lease only (the leader delegates node heartbeats, nothing else).
 * - kube-system/yurt-coordinator-yurthub-certs from core/yurt-coordinator (bundle of the pools' CAs).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { HttpMethod } from '@kubernetes/client-node';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import type { KubeObject } from '../../core/kube.ts';
import { objectNames } from '../../core/render/names.ts';
import { PKI_FILES } from '../../core/render/pki.ts';
import {
  NODE_LEASE_PROXY_GROUP,
  NODE_LEASE_PROXY_USER,
  renderCertsSecret,
  type CompatPool,
  type CoordinatorPki,
} from '../../core/yurt-coordinator/index.ts';
import { COORDINATOR_PKI_SECRET } from '../../functions/reconcile/yurt-coordinator.ts';
import type { CertificateAuthority } from '../kube-api/index.ts';
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

/** The compat pools' CAs and the coordinator client PKI, as the reconciler left them in the product namespace. */
export async function readCompatMaterial(
  kc: KubeConfig,
  namespace: string,
  pools: string[],
): Promise<{ pools: CompatPool[]; pki: CoordinatorPki }> {
  const api = RawObjectApi.fromKubeConfig(kc);
  const secret = (name: string) =>
    api.requestJson<Obj>(HttpMethod.GET, `/api/v1/namespaces/${namespace}/secrets/${name}`);
  const compat: CompatPool[] = [];
  for (const pool of pools) {
    const ca = decode((await secret(objectNames(pool).caSecret)).data);
    compat.push({ pool, caPem: ca[PKI_FILES.caCert]!, etcdCaPem: ca[PKI_FILES.etcdCaCert]! });
  }
  const files = decode((await secret(COORDINATOR_PKI_SECRET)).data) as CoordinatorPki['files'];
  return { pools: compat, pki: { files, reused: true, reasons: [] } };
}

export async function installForYurtHubs(
  kc: KubeConfig,
  hostCa: CertificateAuthority,
  namespace: string,
  pools: string[],
): Promise<{ certsSecret: KubeObject }> {
  await applyAll(kc, UPSTREAM_YURTHUB_HOST_RBAC);
  const material = await readCompatMaterial(kc, namespace, pools);
  const nodeLeaseProxy = await issueFromTemplate(hostCa, {
    cn: NODE_LEASE_PROXY_USER,
    orgs: [NODE_LEASE_PROXY_GROUP],
    usage: 'clientAuth',
  });
  const certsSecret = renderCertsSecret(material.pools, material.pki, nodeLeaseProxy);
  await applyAll(kc, [certsSecret]);
  return { certsSecret };
}
