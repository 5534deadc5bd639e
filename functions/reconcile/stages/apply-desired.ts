/**
 * Stage 3 of a reconcile pass: render what should be (pure core) from what is, and write only the
 * difference.
 *
 * Reads the Service (its ClusterIP is a SAN), the PKI Secrets (reused byte for byte), the cluster CA and the
 * rest of the owned objects; renders; removes list entries others added (server-side apply keeps them);
 * applies only objects that differ — the Service first, and if its ClusterIP was only now allocated, renders
 * again so the certificate carries it. The CA Secret is owned by the NodePool, so a deleted PoolSpirit leaves
 * the pool CA in place for the one re-created. A paused spec is rendered (for its status) but not applied.
 */

import type { ClusterClient, ObjectRef } from '../../../adapters/kubernetes/index.ts';
import type {
  FieldIssue,
  NodePool,
  ObjectNames,
  PkiProof,
  RenderResult,
  ResolvedPoolSpiritSpec,
} from '../../../core/index.ts';
import {
  existingPkiFromSecrets,
  objectNames,
  objectsToApply,
  renderPoolSpirit,
  renderPoolSpiritService,
  SpecRenderError,
} from '../../../core/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import { objectKey } from '../../../core/kube.ts';
import { foreignEntriesPatch } from '../../../core/plan.ts';
import type { PoolCompatInput } from '../../../core/yurt-coordinator/index.ts';
import type { ReconcileDeps } from '../deps.ts';
import { type OwnedReads, readVia } from './owned-reads.ts';
import { describe, ownedByOtherNodePool } from './ownership.ts';

export const CLUSTER_DOMAIN = 'cluster.local';

export type Applied =
  | { kind: 'invalid'; issues: FieldIssue[] }
  | {
      kind: 'rendered';
      rendered: RenderResult;
      /** The owned objects as the cluster has them after this stage, by objectKey. */
      live: ReadonlyMap<string, KubeObject>;
      applied: string[];
    };

export interface DesiredInput {
  deps: ReconcileDeps;
  client: ClusterClient;
  namespace: string;
  nodePool: NodePool;
  poolSpirit: KubeObject;
  spec: ResolvedPoolSpiritSpec;
  /** Set for a yurt-coordinator-compatible pool (docs/yurthub.md): it trusts the coordinator client CA. */
  yurtCoordinator?: PoolCompatInput;
  /** The cluster's hubs cannot use a coordinator: a compat label is ignored (core/yurt-coordinator/hub-support.ts). */
  compatRefused?: boolean;
  /** Owned objects already being read (owned-reads.ts): used instead of reading them again. */
  owned?: OwnedReads;
  /** What the pool's last render said of its PKI (RenderInput.pkiProof). */
  pkiProof?: PkiProof;
}

export async function applyDesired({
  deps,
  client,
  namespace,
  nodePool,
  poolSpirit,
  spec,
  yurtCoordinator,
  compatRefused,
  owned,
  pkiProof,
}: DesiredInput): Promise<Applied> {
  const names = objectNames(poolSpirit.metadata.name);
  const applied: string[] = [];
  const read = readVia(client, owned);

  // Everything the render needs from the cluster, read in parallel.
  let [service, caSecret, pkiSecret, agentSecret, liveWorkload, caBundlePem] = await Promise.all([
    read({ apiVersion: 'v1', kind: 'Service', namespace, name: names.base }),
    read({ apiVersion: 'v1', kind: 'Secret', namespace, name: names.caSecret }),
    read({ apiVersion: 'v1', kind: 'Secret', namespace, name: names.pkiSecret }),
    read({ apiVersion: 'v1', kind: 'Secret', namespace, name: names.agentSecret }),
    read({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: names.base }),
    client.readClusterCA(),
  ]);
  // A CA Secret still owned by an earlier NodePool of this name is that pool's, waiting for collection: a
  // re-created pool gets a CA of its own (the apply below replaces it).
  if (caSecret && ownedByOtherNodePool(caSecret, nodePool)) caSecret = undefined;
  if (!caBundlePem) {
    throw new Error('cluster CA not found: expected ConfigMap kube-system/kube-root-ca.crt with key ca.crt');
  }
  const { name, uid } = poolSpirit.metadata;
  if (uid === undefined)
    throw new Error(`PoolSpirit ${name} has no metadata.uid; its objects' owner references need it`);
  const renderTarget = {
    poolSpirit: { metadata: { name, uid }, spec },
    cluster: { caBundlePem, clusterDomain: CLUSTER_DOMAIN, namespace },
  };
  if (!service && !spec.paused) {
    // A new pool: its Service first, so the one render below already puts its ClusterIP into the certificate.
    service = await client.apply(renderPoolSpiritService(renderTarget));
    applied.push(describe(service));
  }
  const render = (serviceClusterIP: string | undefined, existingPki: Record<string, string>) =>
    renderPoolSpirit({
      ...renderTarget,
      nodePool,
      yurtCoordinator,
      compatRefused,
      serviceClusterIP,
      existingPki,
      liveWorkload,
      now: deps.clock(),
      keys: deps.keyFactory,
      pkiProof,
    });

  let rendered: RenderResult;
  try {
    rendered = await render(clusterIPOf(service), existingPkiFromSecrets([caSecret, pkiSecret, agentSecret], names));
  } catch (err) {
    if (!(err instanceof SpecRenderError)) throw err;
    return { kind: 'invalid', issues: err.issues as FieldIssue[] };
  }

  const live = new Map<string, KubeObject>();
  for (const obj of [service, caSecret, pkiSecret, agentSecret, liveWorkload]) if (obj) live.set(objectKey(obj), obj);
  await readTheRest(read, rendered.objects, live, names);
  if (spec.paused) return { kind: 'rendered', rendered, live, applied };

  applied.push(...(await removeForeignEntries(client, rendered.objects, live)));
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
  // The Deployment last, as its pod mounts the rest; the rest at once: a pass pays CPU for every round trip
  // it waits on, and a new pool's six applies were six.
  const workload = pending.filter(isWorkload);
  for (const batch of [pending.filter((o) => !isWorkload(o)), workload]) {
    for (const after of await Promise.all(batch.map((obj) => client.apply(obj)))) {
      applied.push(describe(after));
      live.set(objectKey(after), after);
    }
  }
  return { kind: 'rendered', rendered, live, applied };
}

/** Reads, in parallel, every rendered object not read before the render. */
async function readTheRest(
  read: (ref: ObjectRef) => Promise<KubeObject | undefined>,
  desired: readonly KubeObject[],
  live: Map<string, KubeObject>,
  names: ObjectNames,
): Promise<void> {
  await Promise.all(
    desired
      .filter((obj) => !live.has(objectKey(obj)) && !isPreRead(obj, names))
      .map(async (obj) => {
        const current = await read({
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          namespace: obj.metadata.namespace,
          name: obj.metadata.name,
        });
        if (current) live.set(objectKey(current), current);
      }),
  );
}

/**
 * Server-side apply keeps list entries other managers added (a sidecar, a volume, a second Service port):
 * one guarded JSON patch per object removes them before the apply, so the rendered lists are the whole
 * lists. Objects with nothing foreign cost no write.
 */
async function removeForeignEntries(
  client: ClusterClient,
  desired: readonly KubeObject[],
  live: Map<string, KubeObject>,
): Promise<string[]> {
  const applied: string[] = [];
  for (const obj of desired) {
    const current = live.get(objectKey(obj));
    if (!current) continue;
    const ops = foreignEntriesPatch(obj, current);
    if (ops.length === 0) continue;
    const after = await client.patchJson(
      { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name },
      ops,
    );
    applied.push(`remove foreign entries from ${describe(after)}`);
    live.set(objectKey(after), after);
  }
  return applied;
}

const isWorkload = (obj: KubeObject) => obj.kind === 'Deployment';

function isPreRead(obj: KubeObject, names: ObjectNames): boolean {
  if (obj.kind === 'Secret') return [names.caSecret, names.pkiSecret, names.agentSecret].includes(obj.metadata.name);
  return (obj.kind === 'Service' || obj.kind === 'Deployment') && obj.metadata.name === names.base;
}

function clusterIPOf(service: KubeObject | undefined): string | undefined {
  const ip = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}
