import type { KubeObject } from '../kube.ts';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../render/labels.ts';
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

/** A running pool-spirit pod of a compat pool, as the EndpointSlices point at it. */
export interface CoordinatorPod {
  /** The pod's namespace and name (the endpoint's targetRef). */
  namespace: string;
  name: string;
  ip: string;
  /** YurtHub's service-topology filter keeps an endpoint for a hub whose pool lists this node. */
  nodeName: string;
  ready: boolean;
}

/** What a compat pool contributes to the cluster-wide objects. */
export interface CompatPool {
  pool: string;
  /** The pool CA (signs its apiserver's serving certificate) and etcd CA (signs etcd's). */
  caPem: string;
  etcdCaPem: string;
  /** Its pool-spirit pods that run; none before the first one does (no endpoint is better than a wrong one). */
  pods: CoordinatorPod[];
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
const byPool = (a: CompatPool, b: CompatPool) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0);

/**
 * ca.crt: one bundle that verifies every compat pool's apiserver and etcd (a YurtHub reads the one Secret
 * of its cluster, whatever its pool), each pool keeping its own CAs. Sorted by pool (code point order, not
 * locale) so the Secret is byte-identical whatever order the pools are read in. Empty once no pool is left.
 */
export function caBundle(pools: readonly CompatPool[]): string {
  const pems = [...pools].sort(byPool).flatMap((p) => [p.caPem.trim(), p.etcdCaPem.trim()]);
  return pems.length === 0 ? '' : `${[...new Set(pems)].join('\n')}\n`;
}

/**
 * What the reconciler applies to kube-system/yurt-coordinator-yurthub-certs (YurtHub v1.4 – v1.6.0 reads
 * it): the CA bundle and the shared coordinator client pair, nothing else. Labels and type are the
 * install's (compatInstallObjects), so re-applying the install never conflicts with the reconciler's
 * fields. The node-lease-proxy pair is not here either: it is signed by the host cluster's CA through a
 * CertificateSigningRequest (as upstream's yurt-manager does), so the operator adds its two keys
 * (`nodeLeaseProxyData`); server-side apply leaves keys of another field manager alone, so the reconciler
 * neither needs them nor takes them away.
 */
export function renderCertsSecret(pools: readonly CompatPool[], client: CertPair): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: CERTS_SECRET, namespace: COORDINATOR_NAMESPACE },
    data: {
      [CERTS_SECRET_KEYS.ca]: b64(caBundle(pools)),
      [CERTS_SECRET_KEYS.clientCert]: b64(client.certPem),
      [CERTS_SECRET_KEYS.clientKey]: b64(client.keyPem),
    },
  };
}

/** The operator's part of the certs Secret: the node-lease-proxy pair, issued through the host's CSR API. */
export function nodeLeaseProxyData(pair: CertPair): Record<string, string> {
  return {
    [CERTS_SECRET_KEYS.nodeLeaseProxyCert]: b64(pair.certPem),
    [CERTS_SECRET_KEYS.nodeLeaseProxyKey]: b64(pair.keyPem),
  };
}

/**
 * The two Services YurtHub resolves by name in kube-system (it reads spec.clusterIP and keeps the flag's
 * port). Selector-less: the pool-spirit pods live in the product namespace, which a kube-system selector
 * cannot reach, so the product writes their EndpointSlices itself; the topology annotation makes YurtHub's
 * service-topology filter hand each node only its own pool's endpoints (as upstream). Nothing in them
 * depends on a pool, so they are installed once (infra/cluster/components/yurt-coordinator-compat) and the
 * reconciler only reads their ClusterIPs (serving-certificate SANs).
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
