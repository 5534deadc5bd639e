/**
 * The cluster side of a yurt-coordinator-compatible pool (label poolspirit.io/yurt-coordinator=compat): the
 * cluster's coordinator client PKI, kept in one Secret of the product namespace (no owner: it belongs to
 * every compat pool of the cluster), issued on first need and reused byte for byte after that. Its CA goes
 * into the pool's render; the kube-system objects YurtHub reads (docs/yurthub.md) are rendered by
 * core/yurt-coordinator from the same material.
 */
import type { KubeObject } from '../../core/kube.ts';
import { DEFAULT_PKI_POLICY } from '../../core/render/pki-spec.ts';
import {
  compatLabels,
  COORDINATOR_PKI_FILES,
  ensureCoordinatorPki,
  type PoolCompatInput,
} from '../../core/yurt-coordinator/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import type { ReconcileDeps } from './deps.ts';

export const COORDINATOR_PKI_SECRET = 'poolspirit-yurt-coordinator-client';

/** The render's compat input, and what was written to get it (the Secret, when issued or renewed). */
export async function coordinatorCompatInput(
  deps: ReconcileDeps,
  client: ClusterClient,
  namespace: string,
): Promise<{ input: PoolCompatInput; applied: string[] }> {
  const live = await client.get({ apiVersion: 'v1', kind: 'Secret', namespace, name: COORDINATOR_PKI_SECRET });
  const existing = Object.fromEntries(
    Object.entries((live?.data ?? {}) as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v, 'base64').toString('utf8'),
    ]),
  );
  const applied: string[] = [];
  const pki = await ensureCoordinatorPki(existing, deps.clock(), deps.keyFactory, DEFAULT_PKI_POLICY);
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
  return { input: { clientCaPem: pki.files[COORDINATOR_PKI_FILES.caCert] }, applied };
}
