/**
 * The cluster side of one reconcile pass: read what is, render what should be (pure core), write only the
 * difference. A converged pool costs reads only — zero writes.
 *
 * Order of work, and why:
 *  1. NodePool gone → nothing to do: owner references take the PoolSpirit and everything under it.
 *  2. Not an edge pool / opted out → delete the PoolSpirit *we* created (GC removes the rest).
 *  3. Ensure the PoolSpirit exists (created from fleet defaults, owned by the NodePool). Its spec is the
 *     operator's from then on: we never re-apply our defaults over it.
 *  4. Parse the spec. Invalid → condition naming each bad field; nothing else is touched, so what runs
 *     keeps running.
 *  5. Read the Service (its ClusterIP is a SAN), the PKI Secrets (reused byte for byte), the cluster CA,
 *     the rest of the owned objects; render; remove list entries others added (server-side apply keeps
 *     them); apply only objects that differ — the Service first, and if its ClusterIP was only now
 *     allocated, render again so the certificate carries it. The CA Secret is owned by the NodePool, so
 *     a deleted PoolSpirit leaves the pool CA in place for the one re-created.
 *  6. Status (the reconciler's fields only) applied if it changed; an Event per meaningful transition.
 */
import type { KubeObject } from '../../core/kube.ts';
import { objectKey } from '../../core/kube.ts';
import {
  DEFAULT_NAMESPACE,
  existingPkiFromSecrets,
  fieldDiffs,
  meaningfulTransitions,
  objectNames,
  objectsToApply,
  observeWorkload,
  parsePoolSpiritSpec,
  poolSpiritIntent,
  poolSpiritStatus,
  renderPoolSpirit,
  renderPoolSpiritService,
  SpecRenderError,
  MANAGED_BY,
  MANAGED_BY_LABEL,
} from '../../core/index.ts';
import type { FieldIssue, NodePool, PoolSpiritStatus, RenderResult, ObjectNames } from '../../core/index.ts';
import { podProblem, type PodLike, type PodProblem } from '../../core/status.ts';
import { RequeueError } from '../../core/outcome.ts';
import { foreignEntriesPatch } from '../../core/plan.ts';
import { poolSpiritRef } from '../../core/render/index.ts';
import type { ReconcileOutcome } from '../../adapters/state-table/index.ts';
import { sanitizeErrorMessage } from '../../adapters/state-table/index.ts';
import { ClusterAccessError } from '../../adapters/cluster-access/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { statusOf } from '../../adapters/kubernetes/retry.ts';
import type { ReconcileDeps } from './deps.ts';
import type { ReconcileTarget } from './trigger.ts';
import { coordinatorCompatInput } from './yurt-coordinator.ts';
import { wantsYurtCoordinatorCompat } from '../../core/yurt-coordinator/compat.ts';

export interface ConvergeResult {
  outcome: Exclude<ReconcileOutcome, 'error'>;
  observedGeneration?: number;
  desiredHash?: string;
  /** Writes made to the cluster in this pass. */
  clusterWrites: number;
  /** `Kind namespace/name` of every object applied, in order. */
  applied: string[];
}

export const CLUSTER_DOMAIN = 'cluster.local';

export async function converge(deps: ReconcileDeps, target: ReconcileTarget, _fencingToken: number): Promise<ConvergeResult> {
  const registration = await deps.cluster(target.clusterId);
  if (!registration) throw new ClusterAccessError(target.clusterId, undefined, 'not-registered');
  const connection = await deps.clusterAccess.connectionFor(registration);
  const client = deps.clusterClient(connection, target.clusterId);
  const writesBefore = client.counters.writes;
  const applied: string[] = [];
  const done = (outcome: ConvergeResult['outcome'], extra: Partial<ConvergeResult> = {}): ConvergeResult => {
    const clusterWrites = client.counters.writes - writesBefore;
    // "applied" whenever anything was written (a status-only change included), "unchanged" only for zero.
    const settled = outcome === 'unchanged' && clusterWrites > 0 ? 'applied' : outcome;
    return { outcome: settled, clusterWrites, applied, ...extra };
  };
  try {
    return await convergePool(deps, client, target.nodePool, applied, done);
  } catch (err) {
    // Rejected credentials (a rotated kubeconfig secret, a revoked token): resolve them afresh on the retry
    // instead of reusing the cached config until its TTL runs out.
    if (statusOf(err) === 401) deps.clusterAccess.forget(target.clusterId);
    // Let the outcome record count what reached the cluster before the failure.
    if (err && typeof err === 'object') Object.assign(err, { clusterWrites: client.counters.writes - writesBefore });
    throw err;
  }
}

type Done = (outcome: ConvergeResult['outcome'], extra?: Partial<ConvergeResult>) => ConvergeResult;

async function convergePool(
  deps: ReconcileDeps,
  client: ClusterClient,
  poolName: string,
  applied: string[],
  done: Done,
): Promise<ConvergeResult> {
  const namespace = deps.namespace ?? DEFAULT_NAMESPACE;
  const nodePool = (await client.getNodePool(poolName)) as NodePool | undefined;
  if (!nodePool) return done('gone');

  const intent = poolSpiritIntent(nodePool, deps.fleetDefaults);
  let poolSpirit = await client.getPoolSpirit(poolName);
  if (!intent.wanted) {
    if (intent.reason === 'NodePoolDeleting') return done('gone');
    if (poolSpirit && createdByUsFor(poolSpirit, nodePool) && !poolSpirit.metadata.deletionTimestamp) {
      await handCaToPoolSpirit(client, namespace, poolSpirit, nodePool, applied);
      await client.delete(
        { apiVersion: poolSpirit.apiVersion, kind: poolSpirit.kind, name: poolSpirit.metadata.name },
        poolSpirit.metadata.uid,
      );
      applied.push(`delete ${describe(poolSpirit)}`);
    }
    return done('not-edge');
  }

  if (poolSpirit?.metadata.deletionTimestamp) {
    // The previous PoolSpirit (e.g. of a deleted and re-created pool) is still being collected; the
    // retry of this event creates the new one once it is gone.
    throw new RequeueError(`PoolSpirit ${poolName} is being deleted; retry once it is gone`, 2_000);
  }
  if (!poolSpirit) {
    poolSpirit = await client.apply(intent.spec as unknown as KubeObject);
    applied.push(describe(poolSpirit));
  }
  const generation = poolSpirit.metadata.generation ?? 1;
  const previous = poolSpirit.status as PoolSpiritStatus | undefined;

  const parsed = parsePoolSpiritSpec(poolSpirit.spec);
  if (!parsed.ok) {
    await writeStatus(deps, client, poolSpirit, previous, poolSpiritStatus({ generation, now: deps.clock(), previous, invalid: parsed.issues }));
    return done('invalid', { observedGeneration: generation });
  }
  const spec = parsed.spec;
  const names = objectNames(poolSpirit.metadata.name);

  // Everything the render needs from the cluster, read in parallel.
  let [service, caSecret, pkiSecret, agentSecret, liveWorkload, caBundlePem] = await Promise.all([
    client.get({ apiVersion: 'v1', kind: 'Service', namespace, name: names.base }),
    client.get({ apiVersion: 'v1', kind: 'Secret', namespace, name: names.caSecret }),
    client.get({ apiVersion: 'v1', kind: 'Secret', namespace, name: names.pkiSecret }),
    client.get({ apiVersion: 'v1', kind: 'Secret', namespace, name: names.agentSecret }),
    client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: names.base }),
    client.readClusterCA(),
  ]);
  // A CA Secret still owned by an earlier NodePool of this name is that pool's, waiting for collection: a
  // re-created pool gets a CA of its own (the apply below replaces it).
  if (caSecret && ownedByOtherNodePool(caSecret, nodePool)) caSecret = undefined;
  if (!caBundlePem) {
    throw new Error('cluster CA not found: expected ConfigMap kube-system/kube-root-ca.crt with key ca.crt');
  }
  const renderTarget = { poolSpirit: { metadata: { name: poolSpirit.metadata.name, uid: poolSpirit.metadata.uid! }, spec }, cluster: { caBundlePem, clusterDomain: CLUSTER_DOMAIN, namespace } };
  if (!service && !spec.paused) {
    // A new pool: its Service first, so the one render below already puts its ClusterIP into the certificate.
    service = await client.apply(renderPoolSpiritService(renderTarget));
    applied.push(describe(service));
  }
  const yurtCoordinator = wantsYurtCoordinatorCompat(nodePool) ? await coordinatorCompatInput(deps, client, namespace, applied) : undefined;
  const render = (serviceClusterIP: string | undefined, existingPki: Record<string, string>) =>
    renderPoolSpirit({
      ...renderTarget,
      nodePool,
      yurtCoordinator,
      serviceClusterIP,
      existingPki,
      liveWorkload,
      now: deps.clock(),
      keys: deps.keyFactory,
    });

  let rendered: RenderResult;
  try {
    rendered = await render(clusterIPOf(service), existingPkiFromSecrets([caSecret, pkiSecret, agentSecret], names));
  } catch (err) {
    if (!(err instanceof SpecRenderError)) throw err;
    await writeStatus(deps, client, poolSpirit, previous, poolSpiritStatus({ generation, now: deps.clock(), previous, invalid: err.issues as FieldIssue[] }));
    return done('invalid', { observedGeneration: generation });
  }

  const live = new Map<string, KubeObject | undefined>();
  for (const obj of [service, caSecret, pkiSecret, agentSecret, liveWorkload]) if (obj) live.set(objectKey(obj), obj);
  await Promise.all(
    rendered.objects
      .filter((obj) => !live.has(objectKey(obj)) && !isPreRead(obj, names))
      .map(async (obj) => {
        const current = await client.get({
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          namespace: obj.metadata.namespace,
          name: obj.metadata.name,
        });
        if (current) live.set(objectKey(current), current);
      }),
  );

  if (!spec.paused) {
    await removeForeignEntries(client, rendered.objects, live, applied);
    let pending = objectsToApply(rendered.objects, live);
    const desiredService = pending.find((o) => o.kind === 'Service' && o.apiVersion === 'v1');
    if (desiredService) {
      const after = await client.apply(desiredService);
      applied.push(describe(after));
      live.set(objectKey(after), after);
      const ip = clusterIPOf(after);
      if (ip !== clusterIPOf(service)) {
        // The certificate must name the Service IP: render again, keeping every key and cert still good.
        const secretsSoFar = rendered.objects.filter((o) => o.kind === 'Secret');
        rendered = await render(ip, existingPkiFromSecrets(secretsSoFar, names));
      }
      pending = objectsToApply(rendered.objects, live);
    }
    for (const obj of pending) {
      const after = await client.apply(obj);
      applied.push(describe(after));
      live.set(objectKey(after), after);
    }
    await announceCaRotation(deps, client, poolSpirit, previous, rendered);
  }

  const desiredWorkload = rendered.objects.find((o) => o.kind === 'Deployment');
  const workloadNow = desiredWorkload ? live.get(objectKey(desiredWorkload)) : undefined;
  const secretsApplied = rendered.objects
    .filter((o) => o.kind === 'Secret')
    .every((o) => {
      const current = live.get(objectKey(o));
      return current !== undefined && fieldDiffs(o, current).length === 0;
    });
  const status = poolSpiritStatus({
    generation,
    now: deps.clock(),
    previous,
    paused: spec.paused,
    render: rendered,
    secretsApplied,
    workload: observeWorkload(workloadNow, desiredWorkload, await podProblemOf(client, workloadNow, poolName)),
  });
  await writeStatus(deps, client, poolSpirit, previous, status);
  const outcome = spec.paused ? 'paused' : 'unchanged';
  return done(outcome, { observedGeneration: generation, desiredHash: rendered.desiredHash });
}

/**
 * Server-side apply keeps list entries other managers added (a sidecar, a volume, a second Service port):
 * one guarded JSON patch per object removes them before the apply, so the rendered lists are the whole
 * lists. Objects with nothing foreign cost no write.
 */
async function removeForeignEntries(client: ClusterClient, desired: readonly KubeObject[], live: Map<string, KubeObject | undefined>, applied: string[]): Promise<void> {
  for (const obj of desired) {
    const current = live.get(objectKey(obj));
    if (!current) continue;
    const ops = foreignEntriesPatch(obj, current);
    if (ops.length === 0) continue;
    const after = await client.patchJson({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name }, ops);
    applied.push(`remove foreign entries from ${describe(after)}`);
    live.set(objectKey(after), after);
  }
}

/** Applies the status only when a field the reconciler owns differs; an Event per meaningful transition. */
async function writeStatus(
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
    await client.createEvent({ involved: poolSpirit, ...event }).catch((err: unknown) =>
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
    conditions: s.conditions?.map(({ type, status: value, reason, observedGeneration }) => ({ type, status: value, reason, observedGeneration })),
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
async function announceCaRotation(deps: ReconcileDeps, client: ClusterClient, poolSpirit: KubeObject, previous: PoolSpiritStatus | undefined, rendered: RenderResult): Promise<void> {
  const why = rendered.pki.reasons.filter((r) => r.startsWith('ca: '));
  if (why.length === 0 || !previous?.certificates?.caNotAfter) return;
  const message = `the pool CA was issued anew (${why.join('; ')}); clients of the pool's apiserver must trust the new CA (Secret ${rendered.names.caSecret}, key ca.crt)`;
  await client.createEvent({ involved: poolSpirit, type: 'Warning', reason: 'CARotated', message }).catch((err: unknown) =>
    deps.logger.warn('could not record an Event', { reason: 'CARotated', error: sanitizeErrorMessage(err) }),
  );
}

/**
 * The pool CA Secret is owned by the NodePool so that it outlives a deleted PoolSpirit. When the pool stops
 * wanting a pool-spirit, ownership goes back to the PoolSpirit about to be deleted, so garbage collection
 * takes the CA with everything else (the reconciler holds no delete right on Secrets).
 */
/**
 * Why a pool-spirit that is not ready is not, read from its pods (one list, made only then): the scheduler's
 * reason or the crash-looping container's last line is what the PoolSpirit condition says.
 */
async function podProblemOf(client: ClusterClient, workload: KubeObject | undefined, poolName: string): Promise<PodProblem | undefined> {
  if (!workload || observeWorkload(workload).ready) return undefined;
  const selector = (workload.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels;
  if (!selector || Object.keys(selector).length === 0) return undefined;
  const pods = await client.listByLabel('v1', 'Pod', workload.metadata.namespace, selector);
  return podProblem(pods as PodLike[], poolName);
}

async function handCaToPoolSpirit(client: ClusterClient, namespace: string, poolSpirit: KubeObject, nodePool: NodePool, applied: string[]): Promise<void> {
  const ref = { apiVersion: 'v1', kind: 'Secret', namespace, name: objectNames(poolSpirit.metadata.name).caSecret };
  const ca = await client.get(ref);
  const owners = ca?.metadata.ownerReferences ?? [];
  if (!ca || !owners.some((o) => o.kind === 'NodePool' && o.uid === nodePool.metadata.uid)) return;
  const owner = poolSpiritRef({ metadata: { name: poolSpirit.metadata.name, uid: poolSpirit.metadata.uid! } });
  await client.patchJson(ref, [
    { op: 'test', path: '/metadata/uid', value: ca.metadata.uid },
    { op: 'replace', path: '/metadata/ownerReferences', value: [owner] },
  ]);
  applied.push(`hand ${describe(ca)} to ${describe(poolSpirit)}`);
}

function ownedByOtherNodePool(obj: KubeObject, nodePool: NodePool): boolean {
  return (obj.metadata.ownerReferences ?? []).some((o) => o.kind === 'NodePool' && o.name === nodePool.metadata.name && o.uid !== nodePool.metadata.uid);
}

/** The PoolSpirit was created by this reconciler for this very NodePool (same uid), not by a person. */
function createdByUsFor(poolSpirit: KubeObject, nodePool: NodePool): boolean {
  const managed = poolSpirit.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
  const owned = (poolSpirit.metadata.ownerReferences ?? []).some(
    (ref) => ref.kind === 'NodePool' && ref.uid === nodePool.metadata.uid && ref.controller === true,
  );
  return managed && owned;
}

function isPreRead(obj: KubeObject, names: ObjectNames): boolean {
  if (obj.kind === 'Secret') return [names.caSecret, names.pkiSecret, names.agentSecret].includes(obj.metadata.name);
  return (obj.kind === 'Service' || obj.kind === 'Deployment') && obj.metadata.name === names.base;
}

function clusterIPOf(service: KubeObject | undefined): string | undefined {
  const ip = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}

function describe(obj: KubeObject): string {
  return `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
}
