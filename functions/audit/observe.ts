/**
 * Reads what the audit judges from one cluster: NodePools, PoolSpirits, every object labelled as
 * pool-spirit's (one list per kind the core renders), the pool-spirit pods and the Nodes — a fixed number
 * of list calls per cluster, whatever the number of pools — and renders each pool's desired objects with
 * the core, exactly as the reconcile would, to compare (spec drift).
 */

import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import type { ClusterRegistration } from '../../adapters/state-table/index.ts';
import type { ClusterObservation, DesiredObjects } from '../../core/audit/index.ts';
import { poolOfSpirit } from '../../core/audit/index.ts';
import type { NodePool } from '../../core/index.ts';
import {
  DEFAULT_NAMESPACE,
  existingPkiFromSecrets,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  objectNames,
  parsePoolSpiritSpec,
  poolSpiritIntent,
  renderPoolSpiritObjects,
} from '../../core/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import { objectKey } from '../../core/kube.ts';
import { API_VERSION as POOLSPIRIT_API_VERSION, KIND as POOLSPIRIT_KIND } from '../../core/poolspirit/names.ts';
import {
  CERTS_SECRET,
  COORDINATOR_NAMESPACE,
  compatInEffect,
  type PoolCompatInput,
} from '../../core/yurt-coordinator/index.ts';
import { hubCoordinatorSupport, observedCompatInput, readInstalled } from '../yurt-coordinator/read.ts';
import type { AuditDeps } from './deps.ts';

/**
 * The kinds pool-spirit renders (see core/render): namespaced ones live in the product namespace. No RBAC
 * kind: the agents' rights are static (infra/cluster/agent/rbac.yaml) and this identity may not read RBAC.
 */
export const OWNED_KINDS: ReadonlyArray<{ apiVersion: string; kind: string; namespaced: boolean }> = [
  { apiVersion: 'v1', kind: 'Secret', namespaced: true },
  { apiVersion: 'v1', kind: 'ConfigMap', namespaced: true },
  { apiVersion: 'v1', kind: 'ServiceAccount', namespaced: true },
  { apiVersion: 'v1', kind: 'Service', namespaced: true },
  { apiVersion: 'apps/v1', kind: 'Deployment', namespaced: true },
];

const CLUSTER_DOMAIN = 'cluster.local';

/** `registration` carries the OpenYurt release an operator declared (compat is refused where hubs have none). */
export async function observeCluster(
  deps: AuditDeps,
  clusterId: string,
  client: ClusterClient,
  registration: Pick<ClusterRegistration, 'openYurtRelease'> = {},
): Promise<ClusterObservation> {
  const namespace = deps.namespace ?? DEFAULT_NAMESPACE;
  const managed = { [MANAGED_BY_LABEL]: MANAGED_BY };
  const [nodePools, poolSpirits, pods, nodes, caBundlePem, ...ownedLists] = await Promise.all([
    client.listNodePools() as Promise<NodePool[]>,
    client.listByLabel(POOLSPIRIT_API_VERSION, POOLSPIRIT_KIND, undefined, {}),
    client.listByLabel('v1', 'Pod', namespace, managed),
    client.listByLabel('v1', 'Node', undefined, {}),
    client.readClusterCA(),
    ...OWNED_KINDS.map((k) => client.listByLabel(k.apiVersion, k.kind, k.namespaced ? namespace : undefined, managed)),
  ]);
  const owned = ownedLists.flat();
  const liveByKey = new Map(owned.map((o) => [objectKey(o), o]));
  const desired: Record<string, DesiredObjects> = {};
  const spirits = new Map(poolSpirits.map((s) => [poolOfSpirit(s), s]));
  // Compat pools render with the cluster's coordinator material, as the reconcile renders them; where the
  // cluster's hubs have no coordinator client, as any pool (the reconcile refuses compat there).
  const hubs = await hubCoordinatorSupport(client, { id: clusterId, ...registration });
  const compatRefused = !hubs.supported;
  const compatPools = nodePools.filter((p) => compatInEffect(p, compatRefused)).map((p) => p.metadata.name);
  const compat = compatPools.length > 0 ? await observedCompatInput(client, namespace) : undefined;
  // Who else wrote the keys the product renders there (a missing install is the pools' own condition).
  const certsSecret =
    compatPools.length > 0
      ? (
          await readInstalled(client, {
            apiVersion: 'v1',
            kind: 'Secret',
            namespace: COORDINATOR_NAMESPACE,
            name: CERTS_SECRET,
          })
        ).object
      : undefined;
  for (const nodePool of nodePools) {
    const spirit = spirits.get(nodePool.metadata.name);
    if (!spirit || spirit.metadata.deletionTimestamp || !poolSpiritIntent(nodePool, deps.fleetDefaults).wanted)
      continue;
    const rendered = await renderDesired(deps, nodePool, spirit, liveByKey, caBundlePem, namespace, {
      compat,
      compatRefused,
    });
    if (rendered) desired[nodePool.metadata.name] = rendered;
  }
  return {
    clusterId,
    nodePools,
    poolSpirits,
    owned,
    pods,
    nodes,
    desired,
    ...(compatPools.length > 0 ? { coordinator: { compatPools, certsSecret } } : {}),
  };
}

/**
 * The pool's desired objects, rendered from the same inputs the reconcile uses (live Service IP, live PKI
 * reused byte for byte). Undefined for a spec that does not parse: the PoolSpirit's Invalid status is the
 * finding then, and nothing is applied for it, so there is nothing to drift from.
 */
async function renderDesired(
  deps: AuditDeps,
  nodePool: NodePool,
  spirit: KubeObject,
  liveByKey: Map<string, KubeObject>,
  caBundlePem: string | undefined,
  namespace: string,
  coordinator: { compat: { input?: PoolCompatInput; missing?: string } | undefined; compatRefused: boolean },
): Promise<DesiredObjects | undefined> {
  const { compat, compatRefused } = coordinator;
  const parsed = parsePoolSpiritSpec(spirit.spec);
  if (!parsed.ok) return undefined;
  if (!caBundlePem) return { error: 'cluster CA not found (ConfigMap kube-system/kube-root-ca.crt, key ca.crt)' };
  const wantsCompat = compatInEffect(nodePool, compatRefused);
  const yurtCoordinator = wantsCompat ? compat?.input : undefined;
  if (wantsCompat && !yurtCoordinator)
    return { error: `yurt-coordinator compat pool without its coordinator material: ${compat?.missing ?? 'unread'}` };
  if (!spirit.metadata.uid) return { error: `PoolSpirit ${spirit.metadata.name} has no uid` };
  const names = objectNames(spirit.metadata.name);
  const live = (apiVersion: string, kind: string, name: string) =>
    liveByKey.get(objectKey({ apiVersion, kind, metadata: { name, namespace } }));
  const service = live('v1', 'Service', names.base);
  const clusterIP = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
  const secrets = [names.caSecret, names.pkiSecret, names.agentSecret].map((n) => live('v1', 'Secret', n));
  try {
    const rendered = await renderPoolSpiritObjects({
      poolSpirit: { metadata: { name: spirit.metadata.name, uid: spirit.metadata.uid }, spec: parsed.spec },
      nodePool,
      yurtCoordinator,
      compatRefused,
      cluster: { caBundlePem, clusterDomain: CLUSTER_DOMAIN, namespace },
      serviceClusterIP: clusterIP && clusterIP !== 'None' ? clusterIP : undefined,
      existingPki: existingPkiFromSecrets(secrets, names),
      liveWorkload: live('apps/v1', 'Deployment', names.base),
      now: deps.clock(),
      keys: deps.keyFactory,
    });
    return { objects: rendered.objects };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
