/**
 * The kube-system objects YurtHubs of compat pools read (docs/yurthub.md): Secret
 * yurt-coordinator-yurthub-certs (the CA bundle of every compat pool, the shared client pair) and the two
 * EndpointSlices behind the coordinator Services (every compat pool's running pool-spirit pods). They are
 * installed empty, with fixed names, by infra/cluster/components/yurt-coordinator-compat; the reconciler may
 * only get and patch those names (docs/decisions/0023-compat-cluster-objects.md).
 *
 * Every pass renders them from the whole cluster, not from the pool at hand, so a pass heals what an earlier
 * one missed. Shared by every compat pool, they are written with optimistic concurrency: the targets are
 * read first and each write carries the resourceVersion read, so a write another reconcile made after our
 * read (its pool's CA, its pod) fails ours with 409 instead of being overwritten by an older view; on 409
 * the pass reads everything again. An object that already holds what is rendered is not written.
 */

import { type ClusterClient, FIELD_MANAGER, type ObjectRef, statusOf } from '../../adapters/kubernetes/index.ts';
import { sanitizeErrorMessage } from '../../adapters/state-table/index.ts';
import { fieldDiffs } from '../../core/diff.ts';
import type { KubeObject } from '../../core/kube.ts';
import type { NodePool } from '../../core/nodepool.ts';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../core/render/labels.ts';
import { objectNames } from '../../core/render/names.ts';
import {
  type AddressType,
  CERTS_SECRET,
  type CertPair,
  COMPAT_LABEL,
  COMPAT_VALUE,
  COORDINATOR_NAMESPACE,
  COORDINATOR_SLICES,
  CoordinatorRenderError,
  compatPoolsOf,
  describeForeignWrites,
  type ForeignWrite,
  foreignCertsWrites,
  renderCertsSecret,
  renderCoordinatorEndpointSlices,
} from '../../core/yurt-coordinator/index.ts';
import type { ReconcileDeps } from '../reconcile/deps.ts';
import { describe } from '../reconcile/stages/ownership.ts';
import { readInstalled } from './read.ts';

/** Passes before giving up to the platform's retry: each 409 means another reconcile just wrote. */
export const MAX_CONFLICT_ATTEMPTS = 5;

export type CoordinatorObjects =
  /** `foreignWrites`: other managers that owned keys the product renders, before this pass took them back. */
  | { kind: 'converged'; pools: number; applied: string[]; foreignWrites: ForeignWrite[] }
  /** An install object is missing (404) or the Role to use it is (403): `Kind name (status)` each. */
  | { kind: 'not-installed'; missing: string[] }
  /** kube-apiserver refused what was rendered, or it cannot be rendered (too many endpoints). */
  | { kind: 'rejected'; message: string };

const TARGETS: ObjectRef[] = [
  { apiVersion: 'v1', kind: 'Secret', namespace: COORDINATOR_NAMESPACE, name: CERTS_SECRET },
  ...COORDINATOR_SLICES.map(({ name }) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    namespace: COORDINATOR_NAMESPACE,
    name,
  })),
];

export async function convergeCoordinatorObjects(
  deps: ReconcileDeps,
  client: ClusterClient,
  namespace: string,
  clientPair: CertPair,
  compatRefused = false,
): Promise<CoordinatorObjects> {
  const applied: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const pass = await onePass(deps, client, namespace, clientPair, applied, compatRefused);
    if (pass !== 'conflict') return pass;
    if (attempt >= MAX_CONFLICT_ATTEMPTS) {
      throw new Error(
        `the kube-system yurt-coordinator objects changed under every one of ${MAX_CONFLICT_ATTEMPTS} attempts (409): left to a retry`,
      );
    }
    deps.logger.info('yurt-coordinator objects written by another reconcile meanwhile; reading them again', {
      attempt,
    });
    // Apart, so that reconciles that collided do not collide again in step.
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.floor(Math.random() * 30)));
  }
}

async function onePass(
  deps: ReconcileDeps,
  client: ClusterClient,
  namespace: string,
  clientPair: CertPair,
  applied: string[],
  compatRefused: boolean,
): Promise<CoordinatorObjects | 'conflict'> {
  // 1. The targets, first: their resourceVersions are the preconditions of the writes below.
  const read = await Promise.all(TARGETS.map((ref) => readInstalled(client, ref)));
  const missing = read.flatMap((r) => (r.missing ? [r.missing] : []));
  if (missing.length > 0) return { kind: 'not-installed', missing };
  const live = read.flatMap((r) => (r.object ? [r.object] : []));
  const [certsSecret, firstSlice] = live;
  if (!certsSecret || !firstSlice)
    throw new Error('yurt-coordinator: the certs Secret and its EndpointSlices were not all read');
  const foreignWrites = foreignCertsWrites(certsSecret, FIELD_MANAGER);
  if (foreignWrites.length > 0) {
    deps.logger.warn('another writer owns keys of the yurt-coordinator certs Secret; taking them back', {
      writers: describeForeignWrites(foreignWrites),
    });
  }

  // 2. What they should hold, read after them: the compat pools, their CAs and their pods.
  const nodePools = (await client.listNodePools({ [COMPAT_LABEL]: COMPAT_VALUE })) as NodePool[];
  const [caSecrets, pods] = await Promise.all([
    Promise.all(
      nodePools.map(
        async (np) =>
          [
            np.metadata.name,
            await client.get({
              apiVersion: 'v1',
              kind: 'Secret',
              namespace,
              name: objectNames(np.metadata.name).caSecret,
            }),
          ] as const,
      ),
    ),
    client.listByLabel('v1', 'Pod', namespace, { [MANAGED_BY_LABEL]: MANAGED_BY }),
  ]);
  const pools = compatPoolsOf({
    nodePools,
    caSecrets: new Map(caSecrets),
    pods,
    fleetDefaults: deps.fleetDefaults,
    compatRefused,
  });

  let desired: KubeObject[];
  try {
    const addressType = firstSlice.addressType as string;
    if (addressType !== 'IPv4' && addressType !== 'IPv6') {
      throw new CoordinatorRenderError(`EndpointSlice addressType ${addressType} cannot hold pod IPs`);
    }
    desired = [
      renderCertsSecret(pools, clientPair),
      ...renderCoordinatorEndpointSlices(pools, addressType as AddressType),
    ];
  } catch (err) {
    if (err instanceof CoordinatorRenderError) return { kind: 'rejected', message: err.message };
    throw err;
  }

  // 3. Only what differs, each on the version read in step 1.
  for (const [i, want] of desired.entries()) {
    const current = live[i];
    if (!current) throw new Error(`yurt-coordinator: ${describe(want)} was not read before its write`);
    if (fieldDiffs(want, current).length === 0) continue;
    const precondition = { ...want.metadata, resourceVersion: current.metadata.resourceVersion };
    try {
      await client.apply({ ...want, metadata: precondition });
    } catch (err) {
      const status = statusOf(err);
      if (status === 409) return 'conflict';
      if (status === 403 || status === 404)
        return { kind: 'not-installed', missing: [`${describe(want)} (${status})`] };
      if (status === 400 || status === 422) {
        return { kind: 'rejected', message: `${describe(want)}: ${sanitizeErrorMessage(err, 300)}` };
      }
      throw err;
    }
    applied.push(describe(want));
  }
  return { kind: 'converged', pools: pools.length, applied, foreignWrites };
}
