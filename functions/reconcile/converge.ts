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
 *     naming each bad field; nothing else is touched, so what runs keeps running).
 *  4. write the status (stages/write-status.ts), only if it changed; an Event per meaningful transition.
 */
import type { ReconcileOutcome } from '../../adapters/state-table/index.ts';
import { DEFAULT_NAMESPACE, parsePoolSpiritSpec } from '../../core/index.ts';
import { ClusterAccessError } from '../../adapters/cluster-access/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { statusOf } from '../../adapters/kubernetes/retry.ts';
import type { ReconcileDeps } from './deps.ts';
import type { ReconcileTarget } from './trigger.ts';
import { observe } from './stages/observe.ts';
import { ensurePoolSpirit } from './stages/ensure-pool-spirit.ts';
import { applyDesired } from './stages/apply-desired.ts';
import { writePoolSpiritStatus } from './stages/write-status.ts';

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
  /** Writes made to the cluster in this pass. */
  clusterWrites: number;
  /** `Kind namespace/name` of every object written, in order. */
  applied: string[];
}

/** What a stage sequence decided, before the write count is known. */
type PassResult = Omit<ConvergeResult, 'clusterWrites'>;

export async function converge(deps: ReconcileDeps, target: ReconcileTarget): Promise<ConvergeResult> {
  const registration = await deps.cluster(target.clusterId);
  if (!registration) throw new ClusterAccessError(target.clusterId, undefined, 'not-registered');
  const connection = await deps.clusterAccess.connectionFor(registration);
  const client = deps.clusterClient(connection, target.clusterId);
  const writesBefore = client.counters.writes;
  try {
    const pass = await convergePool(deps, client, target.nodePool);
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

async function convergePool(deps: ReconcileDeps, client: ClusterClient, poolName: string): Promise<PassResult> {
  const namespace = deps.namespace ?? DEFAULT_NAMESPACE;
  const observed = await observe(deps, client, poolName);
  if (observed.kind === 'gone') return { outcome: 'gone', applied: [] };

  const ensured = await ensurePoolSpirit(client, namespace, observed);
  if (ensured.kind === 'removed') return { outcome: 'not-edge', applied: ensured.applied };
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
  const desired = await applyDesired({ deps, client, namespace, nodePool: observed.nodePool, poolSpirit, spec });
  if (desired.kind === 'invalid') {
    await writePoolSpiritStatus(deps, client, poolSpirit, desired);
    return { outcome: 'invalid', observedGeneration, applied: ensured.applied };
  }
  await writePoolSpiritStatus(deps, client, poolSpirit, {
    kind: 'rendered',
    rendered: desired.rendered,
    live: desired.live,
    paused: spec.paused === true,
  });
  return {
    outcome: spec.paused ? 'paused' : 'unchanged',
    observedGeneration,
    desiredHash: desired.rendered.desiredHash,
    applied: [...ensured.applied, ...desired.applied],
  };
}
