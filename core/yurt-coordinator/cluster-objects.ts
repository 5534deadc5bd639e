import type { KubeObject } from '../kube.ts';
import { labelValue, MANAGED_BY, MANAGED_BY_LABEL, POOL_LABEL } from '../render/labels.ts';
import { APISERVER_PORT, ETCD_PROXY_PORT } from '../render/layout.ts';
import {
  APISERVER_SERVICE,
  APISERVER_SERVICE_PORT,
  CERTS_SECRET,
  CERTS_SECRET_KEYS,
  COORDINATOR_NAMESPACE,
  ETCD_SERVICE,
  ETCD_SERVICE_PORT,
  TOPOLOGY_ANNOTATION,
  TOPOLOGY_POOL,
} from './contract.ts';
import { COORDINATOR_PKI_FILES, type CoordinatorPki } from './pki.ts';

/** What a compat pool contributes to the cluster-wide objects. */
export interface CompatPool {
  pool: string;
  /** The pool CA (signs its apiserver's serving certificate) and etcd CA (signs etcd's). */
  caPem: string;
  etcdCaPem: string;
  /** Where the pool-spirit pod runs, once it does: the per-pool EndpointSlices point there. */
  pod?: { ip: string; nodeName: string };
}

export interface CertPair {
  certPem: string;
  keyPem: string;
}

/** Labels of the cluster-wide compat objects: managed by the product, not owned by any one pool. */
export const COMPAT_COMPONENT = 'yurt-coordinator-compat';
export function compatLabels(): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY, 'app.kubernetes.io/component': COMPAT_COMPONENT };
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/**
 * ca.crt: one bundle that verifies every compat pool's apiserver and etcd (a YurtHub reads the one Secret
 * of its cluster, whatever its pool), each pool keeping its own CAs. Sorted by pool so the Secret is
 * byte-identical whatever order the pools are read in.
 */
export function caBundle(pools: CompatPool[]): string {
  const pems = [...pools]
    .sort((a, b) => a.pool.localeCompare(b.pool))
    .flatMap((p) => [p.caPem.trim(), p.etcdCaPem.trim()]);
  return `${[...new Set(pems)].join('\n')}\n`;
}

/**
 * kube-system/yurt-coordinator-yurthub-certs as YurtHub v1.4 – v1.6.0 reads it. `nodeLeaseProxy` is the
 * host-side identity the leader delegates node heartbeats with; it must be signed by the host cluster's CA
 * (a CertificateSigningRequest to kubernetes.io/kube-apiserver-client, as upstream's yurt-manager does), so
 * it is an input: without it the keys are left out and YurtHub waits for them (no delegated heartbeats).
 */
export function renderCertsSecret(pools: CompatPool[], pki: CoordinatorPki, nodeLeaseProxy?: CertPair): KubeObject {
  if (pools.length === 0)
    throw new Error('renderCertsSecret: pools is empty; the Secret is only rendered while a compat pool exists');
  const data: Record<string, string> = {
    [CERTS_SECRET_KEYS.ca]: b64(caBundle(pools)),
    [CERTS_SECRET_KEYS.clientCert]: b64(pki.files[COORDINATOR_PKI_FILES.clientCert]),
    [CERTS_SECRET_KEYS.clientKey]: b64(pki.files[COORDINATOR_PKI_FILES.clientKey]),
  };
  if (nodeLeaseProxy) {
    data[CERTS_SECRET_KEYS.nodeLeaseProxyCert] = b64(nodeLeaseProxy.certPem);
    data[CERTS_SECRET_KEYS.nodeLeaseProxyKey] = b64(nodeLeaseProxy.keyPem);
  }
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: CERTS_SECRET, namespace: COORDINATOR_NAMESPACE, labels: compatLabels() },
    type: 'Opaque',
    data,
  };
}

/**
 * The two Services YurtHub resolves by name in kube-system (it reads spec.clusterIP and keeps the flag's
 * port). Selector-less: the pool-spirit pods live in the product namespace, which a kube-system selector
 * cannot reach, so the product writes their EndpointSlices itself, one per pool; the topology annotation
 * makes YurtHub's service-topology filter hand each node only its own pool's endpoint (as upstream).
 */
export function renderCoordinatorServices(): KubeObject[] {
  const svc = (name: string, port: number, targetPort: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: COORDINATOR_NAMESPACE,
      labels: compatLabels(),
      annotations: { [TOPOLOGY_ANNOTATION]: TOPOLOGY_POOL },
    },
    spec: { type: 'ClusterIP', ports: [{ name: 'https', port, targetPort, protocol: 'TCP' }] },
  });
  return [
    svc(APISERVER_SERVICE, APISERVER_SERVICE_PORT, APISERVER_PORT),
    svc(ETCD_SERVICE, ETCD_SERVICE_PORT, ETCD_PROXY_PORT),
  ];
}

/** One EndpointSlice per Service for a pool whose pool-spirit pod runs (none before: no endpoint is better than a wrong one). */
export function renderPoolEndpointSlices(pool: CompatPool): KubeObject[] {
  if (!pool.pod) return [];
  const { ip, nodeName } = pool.pod;
  const slice = (service: string, port: number): KubeObject => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${labelValue(pool.pool).slice(0, 63 - service.length - 1)}`.replace(/[^a-z0-9.-]/g, '-'),
      namespace: COORDINATOR_NAMESPACE,
      labels: {
        ...compatLabels(),
        [POOL_LABEL]: labelValue(pool.pool),
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': 'poolspirit.io',
      },
    },
    addressType: ip.includes(':') ? 'IPv6' : 'IPv4',
    endpoints: [{ addresses: [ip], nodeName, conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  });
  return [slice(APISERVER_SERVICE, APISERVER_PORT), slice(ETCD_SERVICE, ETCD_PROXY_PORT)];
}
