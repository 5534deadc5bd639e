/**
 * Reading a cluster's yurt-coordinator compat material without writing anything: the coordinator client
 * PKI Secret (product namespace) and the install's kube-system objects. The reconcile issues the PKI when
 * it is missing (compat-input.ts); the audit only reads, to render a compat pool
 * exactly as the reconcile would.
 */

import { type ClusterClient, type ObjectRef, statusOf } from '../../adapters/kubernetes/index.ts';
import type { ClusterRegistration } from '../../adapters/state-table/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import {
  APISERVER_SERVICE,
  type CertPair,
  COORDINATOR_NAMESPACE,
  COORDINATOR_PKI_FILES,
  type CoordinatorSupport,
  coordinatorSupport,
  ETCD_SERVICE,
  type PoolCompatInput,
} from '../../core/yurt-coordinator/index.ts';

export const COORDINATOR_PKI_SECRET = 'poolspirit-yurt-coordinator-client';

/** The coordinator PKI Secret's files, decoded; undefined when the cluster never had a compat pool. */
export async function readCoordinatorPki(
  client: ClusterClient,
  namespace: string,
): Promise<Record<string, string> | undefined> {
  const live = await client.get({ apiVersion: 'v1', kind: 'Secret', namespace, name: COORDINATOR_PKI_SECRET });
  if (!live) return undefined;
  return Object.fromEntries(
    Object.entries((live.data ?? {}) as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v, 'base64').toString('utf8'),
    ]),
  );
}

export function clientPairOf(files: Record<string, string>): CertPair | undefined {
  const certPem = files[COORDINATOR_PKI_FILES.clientCert];
  const keyPem = files[COORDINATOR_PKI_FILES.clientKey];
  return certPem && keyPem ? { certPem, keyPem } : undefined;
}

/**
 * An object of the install (infra/cluster/components/yurt-coordinator-compat), or why it could not be read:
 * missing (404), or not readable (403: the component's Role is not installed). Either is the operator's to
 * fix, so neither is retried; any other error is thrown (retried).
 */
export async function readInstalled(
  client: ClusterClient,
  ref: ObjectRef,
): Promise<{ object: KubeObject; missing?: undefined } | { object?: undefined; missing: string }> {
  try {
    const object = await client.get(ref);
    return object ? { object } : { missing: `${ref.kind} ${ref.name} (404)` };
  } catch (err) {
    if (statusOf(err) === 403) return { missing: `${ref.kind} ${ref.name} (403)` };
    throw err;
  }
}

/**
 * Whether the cluster's YurtHubs can use a pool-spirit as their coordinator (core/yurt-coordinator/
 * hub-support.ts): from the release its operator declared, else from the NodePool versions it serves (the
 * client caches that discovery with the connection).
 */
export async function hubCoordinatorSupport(
  client: ClusterClient,
  registration: Pick<ClusterRegistration, 'id' | 'openYurtRelease'>,
): Promise<CoordinatorSupport> {
  if (registration.openYurtRelease)
    return coordinatorSupport({
      clusterId: registration.id,
      nodePoolVersions: [],
      declaredRelease: registration.openYurtRelease,
    });
  const { nodePoolVersions } = await client.nodePoolVersions();
  return coordinatorSupport({ clusterId: registration.id, nodePoolVersions });
}

/**
 * The render's compat input as the cluster has it, for a reader that may not issue: undefined input (with
 * the reason) while the reconcile has not issued the coordinator PKI yet.
 */
export async function observedCompatInput(
  client: ClusterClient,
  namespace: string,
): Promise<{ input?: PoolCompatInput; missing?: string }> {
  const [files, apiServerService, etcdService] = await Promise.all([
    readCoordinatorPki(client, namespace),
    readInstalled(client, serviceRef(APISERVER_SERVICE)),
    readInstalled(client, serviceRef(ETCD_SERVICE)),
  ]);
  const clientCaPem = files?.[COORDINATOR_PKI_FILES.caCert];
  if (!clientCaPem) return { missing: `Secret ${namespace}/${COORDINATOR_PKI_SECRET} (not issued yet)` };
  return {
    input: {
      clientCaPem,
      apiServerServiceIP: clusterIPOf(apiServerService.object),
      etcdServiceIP: clusterIPOf(etcdService.object),
    },
  };
}

export const serviceRef = (name: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Service',
  namespace: COORDINATOR_NAMESPACE,
  name,
});

export function clusterIPOf(service: KubeObject | undefined): string | undefined {
  const ip = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}
