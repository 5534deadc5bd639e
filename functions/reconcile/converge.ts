/**
 * The cluster side of one reconcile pass: read what is, render what should be (pure core), write only the
 * difference. A converged pool costs reads only — zero writes.
 *
 * Modelled on controller-runtime's `Reconcile(ctx, Request) (Result, error)`: a pass that completes
 * returns a typed result — its outcome, and `requeueAfterMs` when it is waiting on something expected to
 * happen by itself; a pass that fails throws (run.ts turns the thrown value into retry or terminal,
 * core/outcome.ts). The pass runs four named stages, each returning what it wrote:
 *  1. observe (stages/observe.ts): the NodePool and its PoolSpirit, and whether the pool wants one.
 *     Gone → nothing to do: owner references take the PoolSpirit and everything under it.
 *  2. ensure the PoolSpirit (stages/ensure-pool-spirit.ts): created for a wanted pool, removed for an
 *     unwanted one; wait while an earlier one is being collected.
 *  3. apply the desired objects (stages/apply-desired.ts) — unless the spec is invalid (a condition
 *     naming each bad field; nothing else is touched, so what runs keeps running). For a compat pool
 *     (docs/yurthub.md), then the kube-system objects its YurtHubs read (functions/yurt-coordinator/); a
 *     pool that leaves compat, or whose NodePool is gone, is taken out of them.
 *  4. write the status (stages/write-status.ts), only if it changed; an Event per meaningful transition.
 */

import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { statusOf } from '../../adapters/kubernetes/retry.ts';
import type { ClusterRegistration, ReconcileOutcome } from '../../adapters/state-table/index.ts';
import { DEFAULT_NAMESPACE, objectNames, type PkiProof, parsePoolSpiritSpec } from '../../core/index.ts';
import { wantsYurtCoordinatorCompat } from '../../core/yurt-coordinator/compat.ts';
import { coordinatorCompatInput } from '../yurt-coordinator/compat-input.ts';
import {
  coordinatorObjectsFor,
  hadCoordinatorObjects,
  leaveCoordinatorObjects,
  type YurtCoordinatorCondition,
} from '../yurt-coordinator/pool-stage.ts';
import { hubCoordinatorSupport } from '../yurt-coordinator/read.ts';
import type { ReconcileDeps } from './deps.ts';
import { applyDesired } from './stages/apply-desired.ts';
import { ensurePoolSpirit } from './stages/ensure-pool-spirit.ts';
import { observe } from './stages/observe.ts';
import { ownedRefs, readOwned } from './stages/owned-reads.ts';
import { writePoolSpiritStatus } from './stages/write-status.ts';
import type { ReconcileTarget } from './trigger.ts';

export { CLUSTER_DOMAIN } from './stages/apply-desired.ts';

/** How a pass that completed ended; `requeued` carries `requeueAfterMs`. */
export type ConvergeOutcome = Exclude<ReconcileOutcome, 'error'>;

export interface ConvergeResult {
  outcome: ConvergeOutcome;
  /** Set with `requeued`: when to look again (controller-runtime's `RequeueAfter`). */
  requeueAfterMs?: number;
  /** Why the pass is requeued, in words (logged). */
  requeueReason?: string;
  observedGeneration?: number;
  desiredHash?: string;
  /** What the render said of the pool's PKI: kept in the pool's state for its next pass. */
  pkiProof?: PkiProof;
  /** Writes made to the cluster in this pass. */
  clusterWrites: number;
  /** `Kind namespace/name` of every object written, in order. */
  applied: string[];
}

/** What a stage sequence decided, before the write count is known. */
type PassResult = Omit<ConvergeResult, 'clusterWrites'>;

/** What the pool's stored state says about it before the pass. */
export interface PassHint {
  /**
   * Read the owned objects with the NodePool, all at once (stages/owned-reads.ts): unless the pool's last
   * pass found it gone or not an edge pool, this pass is going to read them.
   */
  readOwnedAtOnce: boolean;
  /**
   * What the last render said of the pool's PKI (from the pool's state): the render reuses the very files it
   * names without checking them again, in whichever environment this pass runs.
   */
  pkiProof?: PkiProof;
}

/** `registration` is the cluster's registry entry, read by the invocation before it took the lease. */
export async function converge(
  deps: ReconcileDeps,
  target: ReconcileTarget,
  registration: ClusterRegistration,
  hint: PassHint = { readOwnedAtOnce: false },
): Promise<ConvergeResult> {
  const connection = await deps.clusterAccess.connectionFor(registration);
  const client = deps.clusterClient(connection, target.clusterId);
  const writesBefore = client.counters.writes;
  try {
    const pass = await convergePool(deps, client, target.nodePool, registration, hint);
    const clusterWrites = client.counters.writes - writesBefore;
    // "applied" whenever anything was written (a status-only change included), "unchanged" only for zero.
    const outcome = pass.outcome === 'unchanged' && clusterWrites > 0 ? 'applied' : pass.outcome;
    return { ...pass, outcome, clusterWrites };
  } catch (err) {
    // Rejected credentials (a rotated kubeconfig secret, a revoked token): resolve them afresh on the retry
    // instead of reusing the cached config until its TTL runs out.
    if (statusOf(err) === 401) deps.clusterAccess.forget(target.clusterId);
    // Let the outcome record count what reached the cluster before the failure.
    if (err && typeof err === 'object') Object.assign(err, { clusterWrites: client.counters.writes - writesBefore });
    throw err;
  }
}

async function convergePool(
  deps: ReconcileDeps,
  client: ClusterClient,
  poolName: string,
  registration: ClusterRegistration,
  hint: PassHint,
): Promise<PassResult> {
  const namespace = deps.namespace ?? DEFAULT_NAMESPACE;
  // Read in the round that reads the NodePool (the PoolSpirit, whose objects these are, is named after the pool).
  const owned = hint.readOwnedAtOnce ? readOwned(client, ownedRefs(namespace, objectNames(poolName))) : undefined;
  const observed = await observe(deps, client, poolName);
  // Whether this cluster's hubs can use a coordinator at all: from the discovery the read above cached.
  const hubs = await hubCoordinatorSupport(client, registration);
  const compatRefused = !hubs.supported;
  // The NodePool's labels are gone with it: whether it was compat is unknown, so the cluster's objects are
  // rendered again wherever the cluster has a coordinator PKI (one read otherwise).
  if (observed.kind === 'gone')
    return { outcome: 'gone', applied: await leaveCoordinatorObjects(deps, client, namespace, compatRefused) };

  const ensured = await ensurePoolSpirit(client, namespace, observed);
  if (ensured.kind === 'removed') {
    const left = hadCoordinatorObjects(observed.poolSpirit)
      ? await leaveCoordinatorObjects(deps, client, namespace, compatRefused)
      : [];
    return { outcome: 'not-edge', applied: [...ensured.applied, ...left] };
  }
  if (ensured.kind === 'wait')
    return { outcome: 'requeued', requeueAfterMs: ensured.afterMs, requeueReason: ensured.why, applied: [] };
  const { poolSpirit } = ensured;
  const observedGeneration = poolSpirit.metadata.generation ?? 1;

  const parsed = parsePoolSpiritSpec(poolSpirit.spec);
  if (!parsed.ok) {
    await writePoolSpiritStatus(deps, client, poolSpirit, { kind: 'invalid', issues: parsed.issues });
    return { outcome: 'invalid', observedGeneration, applied: ensured.applied };
  }
  const spec = parsed.spec;
  // A yurt-coordinator-compatible pool trusts the cluster's coordinator client CA (docs/yurthub.md), where
  // the cluster's hubs have a coordinator client; elsewhere it is rendered as any pool, and says why.
  const wantsCompat = wantsYurtCoordinatorCompat(observed.nodePool);
  const refused: YurtCoordinatorCondition | undefined =
    wantsCompat && !hubs.supported ? { status: 'False', reason: hubs.reason, message: hubs.message } : undefined;
  const compat = wantsCompat && !refused ? await coordinatorCompatInput(deps, client, namespace) : undefined;
  const desired = await applyDesired({
    deps,
    client,
    namespace,
    nodePool: observed.nodePool,
    poolSpirit,
    spec,
    yurtCoordinator: compat?.input,
    compatRefused,
    owned,
    pkiProof: hint.pkiProof,
  });
  const applied = [...ensured.applied, ...(compat?.applied ?? [])];
  if (desired.kind === 'invalid') {
    await writePoolSpiritStatus(deps, client, poolSpirit, desired);
    return { outcome: 'invalid', observedGeneration, applied };
  }
  applied.push(...desired.applied);
  const coordinator = await coordinatorObjectsFor(deps, client, namespace, {
    compat,
    poolSpirit,
    paused: spec.paused === true,
    compatRefused,
    refused: refused !== undefined,
  });
  applied.push(...coordinator.applied);
  await writePoolSpiritStatus(deps, client, poolSpirit, {
    kind: 'rendered',
    rendered: desired.rendered,
    live: desired.live,
    paused: spec.paused === true,
    yurtCoordinatorObjects: refused ?? coordinator.condition,
  });
  return {
    outcome: spec.paused ? 'paused' : 'unchanged',
    observedGeneration,
    desiredHash: desired.rendered.desiredHash,
    pkiProof: desired.rendered.pki.proof,
    applied,
  };
}
