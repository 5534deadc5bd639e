/**
 * The cluster side of a yurt-coordinator-compatible pool (label poolspirit.io/yurt-coordinator=compat): the
 * cluster's coordinator client PKI, kept in one Secret of the product namespace (no owner: it belongs to
 * every compat pool of the cluster), issued on first need and reused byte for byte after that; and the
 * ClusterIPs of the two kube-system Services YurtHubs dial (the pool's serving certificates name them).
 * The kube-system objects YurtHub reads are converged by stages/coordinator-objects.ts from the same material.
 */
import type { KubeObject } from '../../core/kube.ts';
import { DEFAULT_PKI_POLICY } from '../../core/render/pki-spec.ts';
import {
  APISERVER_SERVICE,
  compatLabels,
  COORDINATOR_NAMESPACE,
  COORDINATOR_PKI_FILES,
  ensureCoordinatorPki,
  ETCD_SERVICE,
  type CertPair,
  type PoolCompatInput,
} from '../../core/yurt-coordinator/index.ts';
import { statusOf, type ClusterClient, type ObjectRef } from '../../adapters/kubernetes/index.ts';
import type { ReconcileDeps } from './deps.ts';

export const COORDINATOR_PKI_SECRET = 'poolspirit-yurt-coordinator-client';

export interface CompatInput {
  /** What renderPoolSpirit takes. */
  input: PoolCompatInput;
  /** The shared client pair YurtHubs present (goes into the kube-system certs Secret). */
  client: CertPair;
  /** kube-system objects of the install that could not be read: `Kind name (HTTP status)`. */
  missing: string[];
  /** What was written to get it (the PKI Secret, when issued or renewed). */
  applied: string[];
}

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

/** The render's compat input: the coordinator PKI (issued on first need) and the two Services' ClusterIPs. */
export async function coordinatorCompatInput(
  deps: ReconcileDeps,
  client: ClusterClient,
  namespace: string,
): Promise<CompatInput> {
  const [existing, apiServerService, etcdService] = await Promise.all([
    readCoordinatorPki(client, namespace),
    readInstalled(client, serviceRef(APISERVER_SERVICE)),
    readInstalled(client, serviceRef(ETCD_SERVICE)),
  ]);
  const applied: string[] = [];
  const pki = await ensureCoordinatorPki(existing ?? {}, deps.clock(), deps.keyFactory, DEFAULT_PKI_POLICY);
  if (!pki.reused) {
    const secret: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: COORDINATOR_PKI_SECRET, namespace, labels: compatLabels() },
      type: 'Opaque',
      data: Object.fromEntries(Object.entries(pki.files).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    };
    await client.apply(secret);
    applied.push(`Secret ${namespace}/${COORDINATOR_PKI_SECRET} (${pki.reasons.join('; ')})`);
  }
  return {
    input: {
      clientCaPem: pki.files[COORDINATOR_PKI_FILES.caCert],
      apiServerServiceIP: clusterIPOf(apiServerService.object),
      etcdServiceIP: clusterIPOf(etcdService.object),
    },
    client: {
      certPem: pki.files[COORDINATOR_PKI_FILES.clientCert],
      keyPem: pki.files[COORDINATOR_PKI_FILES.clientKey],
    },
    missing: [apiServerService.missing, etcdService.missing].filter((m): m is string => m !== undefined),
    applied,
  };
}

const serviceRef = (name: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Service',
  namespace: COORDINATOR_NAMESPACE,
  name,
});

/**
 * An object of the install (infra/cluster/components/yurt-coordinator-compat), or why it could not be read:
 * missing (404), or not readable (403: the component's Role is not installed). Either is the operator's to
 * fix, so neither is retried; any other error is thrown (retried).
 */
export async function readInstalled(
  client: ClusterClient,
  ref: ObjectRef,
): Promise<{ object?: KubeObject; missing?: string }> {
  try {
    const object = await client.get(ref);
    return object ? { object } : { missing: `${ref.kind} ${ref.name} (404)` };
  } catch (err) {
    if (statusOf(err) === 403) return { missing: `${ref.kind} ${ref.name} (403)` };
    throw err;
  }
}

function clusterIPOf(service: KubeObject | undefined): string | undefined {
  const ip = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}
