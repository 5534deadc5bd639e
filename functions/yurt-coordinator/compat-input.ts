/**
 * The cluster side of a yurt-coordinator-compatible pool (label poolspirit.io/yurt-coordinator=compat): the
 * cluster's coordinator client PKI, kept in one Secret of the product namespace (no owner: it belongs to
 * every compat pool of the cluster), issued on first need and reused byte for byte after that; and the
 * ClusterIPs of the two kube-system Services YurtHubs dial (the pool's serving certificates name them).
 * The kube-system objects YurtHub reads are converged by cluster-objects.ts from the same material.
 */

import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import { DEFAULT_PKI_POLICY } from '../../core/render/pki-spec.ts';
import {
  APISERVER_SERVICE,
  type CertPair,
  COORDINATOR_PKI_FILES,
  compatLabels,
  ETCD_SERVICE,
  ensureCoordinatorPki,
  type PoolCompatInput,
} from '../../core/yurt-coordinator/index.ts';
import type { ReconcileDeps } from '../reconcile/deps.ts';
import { COORDINATOR_PKI_SECRET, clusterIPOf, readCoordinatorPki, readInstalled, serviceRef } from './read.ts';

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
