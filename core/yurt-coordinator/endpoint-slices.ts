import { BlockList, isIP } from 'node:net';
import type { KubeObject } from '../kube.ts';
import { APISERVER_PORT, ETCD_PROXY_PORT } from '../render/layout.ts';
import type { CompatPool, CoordinatorPod } from './cluster-objects.ts';
import { APISERVER_SERVICE, COORDINATOR_NAMESPACE, ETCD_SERVICE } from './contract.ts';

/**
 * One EndpointSlice per coordinator Service, named after it, holding every compat pool's pool-spirit pods.
 * One slice can serve every pool because YurtHub v1.4 – v1.6.0 filters endpoints one by one: its
 * service-topology filter (pkg/yurthub/filter/servicetopology, for kube-proxy and CoreDNS) keeps, for a
 * Service annotated `openyurt.io/topologyKeys: openyurt.io/nodepool`, the endpoints whose `nodeName` is a
 * node of the hub's own pool (NodePool status.nodes), whatever slice they are in. Fixed names let the
 * reconciler's RBAC name them (`resourceNames`), so it needs no `create` in kube-system, which RBAC cannot
 * bound by name (docs/decisions/0023-compat-cluster-objects.md).
 */
export const COORDINATOR_SLICES = [
  { name: APISERVER_SERVICE, service: APISERVER_SERVICE, port: APISERVER_PORT },
  { name: ETCD_SERVICE, service: ETCD_SERVICE, port: ETCD_PROXY_PORT },
] as const;
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const SLICE_MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
/** Not the EndpointSlice controllers' value, so neither controller adopts or removes the slices. */
export const SLICE_MANAGER = 'poolspirit.io';
/** kube-apiserver refuses a slice with more (discovery validation, maxEndpoints). */
export const MAX_ENDPOINTS_PER_SLICE = 1000;

export type AddressType = 'IPv4' | 'IPv6';

/** The compat objects cannot be rendered for what the cluster holds (said in the PoolSpirit status). */
export class CoordinatorRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CoordinatorRenderError';
  }
}

/** Addresses kube-apiserver refuses in an EndpointSlice (ValidateEndpointIP): never a pod's routable IP. */
const refused = new BlockList();
refused.addSubnet('127.0.0.0', 8, 'ipv4');
refused.addSubnet('169.254.0.0', 16, 'ipv4');
refused.addSubnet('224.0.0.0', 24, 'ipv4');
refused.addAddress('0.0.0.0', 'ipv4');
refused.addAddress('::1', 'ipv6');
refused.addAddress('::', 'ipv6');
refused.addSubnet('fe80::', 10, 'ipv6');
refused.addSubnet('ff02::', 16, 'ipv6');

/** Whether a pod IP can stand in a slice of this address type. */
export function usableEndpointIP(ip: string, addressType: AddressType): boolean {
  const family = isIP(ip);
  if (family !== (addressType === 'IPv4' ? 4 : 6)) return false;
  return !refused.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Every pool's pods as endpoints, by pool then pod name (a stable order: an unchanged cluster renders the
 * same list, so a steady reconcile writes nothing). Pods whose IP the slice cannot hold are left out (a
 * local process-mode pod on 127.0.0.1; a pod of the other family in a dual-stack cluster).
 */
export function coordinatorEndpoints(pools: readonly CompatPool[], addressType: AddressType): unknown[] {
  const pods: CoordinatorPod[] = [...pools]
    .sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0))
    .flatMap((p) => [...p.pods].sort(byName))
    .filter((pod) => usableEndpointIP(pod.ip, addressType));
  if (pods.length > MAX_ENDPOINTS_PER_SLICE) {
    throw new CoordinatorRenderError(
      `${pods.length} pool-spirit pods of compat pools exceed the ${MAX_ENDPOINTS_PER_SLICE} endpoints one EndpointSlice may hold`,
    );
  }
  return pods.map((pod) => ({
    addresses: [pod.ip],
    conditions: { ready: pod.ready },
    nodeName: pod.nodeName,
    targetRef: { kind: 'Pod', namespace: pod.namespace, name: pod.name },
  }));
}

/**
 * What the reconciler applies to the two slices: endpoints and ports only. Labels, name and address type
 * come from the install (the placeholders below) and stay the installer's: re-applying the install never
 * conflicts with the reconciler's fields. `addressType` is immutable, so it is read from the live slice.
 */
export function renderCoordinatorEndpointSlices(pools: readonly CompatPool[], addressType: AddressType): KubeObject[] {
  const endpoints = coordinatorEndpoints(pools, addressType);
  return COORDINATOR_SLICES.map(({ name, port }) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: COORDINATOR_NAMESPACE },
    addressType,
    endpoints,
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  }));
}
