/**
 * Stage 4 of a reconcile pass: the PoolSpirit's status (the reconciler's fields only), applied only if it
 * changed, and an Event per meaningful transition.
 */

import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { sanitizeErrorMessage } from '../../../adapters/state-table/index.ts';
import type { FieldIssue, PoolSpiritStatus, RenderResult } from '../../../core/index.ts';
import { covers, fieldDiffs, meaningfulTransitions, observeWorkload, poolSpiritStatus } from '../../../core/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import { contentVersion, objectKey } from '../../../core/kube.ts';
import type { StatusInputs as PoolSpiritStatusInputs } from '../../../core/status.ts';
import { type PodLike, type PodProblem, podProblem } from '../../../core/status.ts';
import type { ReconcileDeps } from '../deps.ts';

/** What the status is computed from: an invalid spec, or the render and what the cluster has after the apply. */
export type StatusInput =
  | { kind: 'invalid'; issues: FieldIssue[] }
  | {
      kind: 'rendered';
      rendered: RenderResult;
      live: ReadonlyMap<string, KubeObject>;
      paused: boolean;
      /** A compat pool's YurtCoordinatorObjectsReady condition (functions/yurt-coordinator/pool-stage.ts). */
      yurtCoordinatorObjects?: PoolSpiritStatusInputs['yurtCoordinatorObjects'];
    };

export async function writePoolSpiritStatus(
  deps: ReconcileDeps,
  client: ClusterClient,
  poolSpirit: KubeObject,
  input: StatusInput,
): Promise<void> {
  const generation = poolSpirit.metadata.generation ?? 1;
  const previous = poolSpirit.status as PoolSpiritStatus | undefined;
  if (input.kind === 'invalid') {
    await applyIfChanged(
      deps,
      client,
      poolSpirit,
      previous,
      poolSpiritStatus({ generation, now: deps.clock(), previous, invalid: input.issues }),
    );
    return;
  }
  const { rendered, live, paused, yurtCoordinatorObjects } = input;
  if (!paused) await announceCaRotation(deps, client, poolSpirit, previous, rendered);
  const desiredWorkload = rendered.objects.find((o) => o.kind === 'Deployment');
  const workloadNow = desiredWorkload ? live.get(objectKey(desiredWorkload)) : undefined;
  const secretsApplied = rendered.objects
    .filter((o) => o.kind === 'Secret')
    .every((o) => {
      const current = live.get(objectKey(o));
      return current !== undefined && covers(o, current, contentVersion(current));
    });
  const status = poolSpiritStatus({
    generation,
    now: deps.clock(),
    previous,
    paused,
    render: rendered,
    secretsApplied,
    workload: observeWorkload(
      workloadNow,
      desiredWorkload,
      await podProblemOf(client, workloadNow, poolSpirit.metadata.name),
    ),
    yurtCoordinatorObjects,
  });
  await applyIfChanged(deps, client, poolSpirit, previous, status);
}

async function applyIfChanged(
  deps: ReconcileDeps,
  client: ClusterClient,
  poolSpirit: KubeObject,
  previous: PoolSpiritStatus | undefined,
  status: PoolSpiritStatus,
): Promise<void> {
  if (!statusChanged(status, previous)) return;
  await client.patchStatus(poolSpirit, status as Record<string, unknown>);
  // A PoolSpirit's first status is not a transition: its creation is the news. Only warnings are worth an
  // Event then (e.g. fleet defaults that do not parse); this keeps a new pool at objects + 1 status write.
  const events = meaningfulTransitions(previous, status).filter((e) => previous !== undefined || e.type === 'Warning');
  for (const event of events) {
    // Events are best effort: the status already says it, and a retry would write the status again.
    await client
      .createEvent({ involved: poolSpirit, ...event })
      .catch((err: unknown) =>
        deps.logger.warn('could not record an Event', { reason: event.reason, error: sanitizeErrorMessage(err) }),
      );
  }
  deps.logger.debug('status written', { phase: status.phase });
}

/**
 * Whether the status needs a write. A condition whose message alone changed does not count: messages may
 * carry moving figures (e.g. how long ago a leader renewed), and our own status write comes back to us
 * as a PoolSpirit change notice — writing for a message alone would keep a pool reconciling forever.
 * The new message goes out with the next real change (status, reason, generation or any other field).
 */
function statusChanged(status: PoolSpiritStatus, previous: PoolSpiritStatus | undefined): boolean {
  if (!previous) return true;
  const significant = (s: PoolSpiritStatus) => ({
    ...s,
    conditions: s.conditions?.map(({ type, status: value, reason, observedGeneration }) => ({
      type,
      status: value,
      reason,
      observedGeneration,
    })),
  });
  const previousSignificant = significant(previous);
  if (fieldDiffs(significant(status), previousSignificant).length > 0) return true;
  // fieldDiffs reads `status` as a partial view; a field we stopped setting must be removed too.
  const ownedKeys = ['observedGeneration', 'phase', 'conditions', 'endpoint', 'versions', 'certificates'] as const;
  return ownedKeys.some((k) => status[k] === undefined && previous[k] !== undefined && k !== 'versions');
}

/**
 * A pool that had a CA and now got a new one (its CA Secret was deleted, or the CA expired): every client
 * that trusted the old CA must be given the new one, so the rotation is announced, never silent.
 */
async function announceCaRotation(
  deps: ReconcileDeps,
  client: ClusterClient,
  poolSpirit: KubeObject,
  previous: PoolSpiritStatus | undefined,
  rendered: RenderResult,
): Promise<void> {
  const why = rendered.pki.reasons.filter((r) => r.startsWith('ca: '));
  if (why.length === 0 || !previous?.certificates?.caNotAfter) return;
  const message = `the pool CA was issued anew (${why.join('; ')}); clients of the pool's apiserver must trust the new CA (Secret ${rendered.names.caSecret}, key ca.crt)`;
  await client
    .createEvent({ involved: poolSpirit, type: 'Warning', reason: 'CARotated', message })
    .catch((err: unknown) =>
      deps.logger.warn('could not record an Event', { reason: 'CARotated', error: sanitizeErrorMessage(err) }),
    );
}

/**
 * Why a pool-spirit that is not ready is not, read from its pods (one list, made only then): the scheduler's
 * reason or the crash-looping container's last line is what the PoolSpirit condition says.
 */
async function podProblemOf(
  client: ClusterClient,
  workload: KubeObject | undefined,
  poolName: string,
): Promise<PodProblem | undefined> {
  if (!workload || observeWorkload(workload).ready) return undefined;
  const selector = (workload.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector
    ?.matchLabels;
  if (!selector || Object.keys(selector).length === 0) return undefined;
  const pods = await client.listByLabel('v1', 'Pod', workload.metadata.namespace, selector);
  return podProblem(pods as PodLike[], poolName);
}
