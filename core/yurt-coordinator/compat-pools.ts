import type { KubeObject } from '../kube.ts';
import { type FleetDefaults, type NodePool, poolSpiritIntent } from '../nodepool.ts';
import { labelValue, POOL_LABEL } from '../render/labels.ts';
import { PKI_FILES } from '../render/pki.ts';
import type { CompatPool, CoordinatorPod } from './cluster-objects.ts';
import { compatInEffect } from './compat.ts';

interface PodShape {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { nodeName?: string };
  status?: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }> };
}

const pem = (secret: KubeObject | undefined, key: string): string | undefined => {
  const value = (secret?.data as Record<string, string> | undefined)?.[key];
  return value ? Buffer.from(value, 'base64').toString('utf8') : undefined;
};

/**
 * The compat pools the cluster-wide objects are rendered from, out of what the reconcile read: every
 * NodePool that wants a pool-spirit and is labelled compat, whose CA Secret exists (a pool not yet rendered
 * has nothing to trust), with its running pool-spirit pods. A CA Secret still owned by an earlier NodePool of
 * the same name (being collected) does not count: its CAs are not the ones the pool's pool-spirit serves.
 */
export function compatPoolsOf(input: {
  nodePools: readonly NodePool[];
  /** The CA Secret of each pool, by NodePool name (undefined when missing). */
  caSecrets: ReadonlyMap<string, KubeObject | undefined>;
  /** Pool-spirit pods of every pool (label poolspirit.io/pool). */
  pods: readonly KubeObject[];
  fleetDefaults?: FleetDefaults;
  /** The cluster's hubs have no coordinator client (hub-support.ts): no pool is published. */
  compatRefused?: boolean;
}): CompatPool[] {
  const out: CompatPool[] = [];
  for (const nodePool of input.nodePools) {
    const name = nodePool.metadata.name;
    if (!compatInEffect(nodePool, input.compatRefused) || !poolSpiritIntent(nodePool, input.fleetDefaults).wanted)
      continue;
    const ca = input.caSecrets.get(name);
    const stale = (ca?.metadata.ownerReferences ?? []).some(
      (o) => o.kind === 'NodePool' && o.name === name && o.uid !== nodePool.metadata.uid,
    );
    const caPem = pem(ca, PKI_FILES.caCert);
    const etcdCaPem = pem(ca, PKI_FILES.etcdCaCert);
    if (stale || !caPem || !etcdCaPem) continue;
    out.push({ pool: name, caPem, etcdCaPem, pods: runningPods(input.pods, name) });
  }
  return out;
}

/** A pod counts once it runs with an address on a node, until it is being deleted. */
function runningPods(pods: readonly KubeObject[], pool: string): CoordinatorPod[] {
  const out: CoordinatorPod[] = [];
  for (const pod of pods as unknown as PodShape[]) {
    const { metadata, spec, status } = pod;
    if (metadata.labels?.[POOL_LABEL] !== labelValue(pool) || metadata.deletionTimestamp) continue;
    if (status?.phase !== 'Running' || !status.podIP || !spec?.nodeName) continue;
    out.push({
      namespace: metadata.namespace ?? '',
      name: metadata.name,
      ip: status.podIP,
      nodeName: spec.nodeName,
      ready: status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    });
  }
  return out;
}
