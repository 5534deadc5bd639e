/**
 * Which NodePool version to read on a cluster, from what its apiserver serves (the APIGroup document of
 * apps.openyurt.io). OpenYurt's own CRD differs by release: v1.5 serves v1alpha1 and v1beta1 (stored), v1.7
 * adds v1beta2 (stored). The product reads the server's preferred version when it can read it, since that is
 * the storage version of OpenYurt's CRDs and so needs no conversion webhook; otherwise the newest it reads.
 *
 * Pure: the adapters fetch the document, this decides.
 */

export const NODEPOOL_GROUP = 'apps.openyurt.io';

/**
 * The versions whose fields the product reads (core/nodepool.ts: spec.type, hostNetwork, taints, labels and
 * annotations, the same in both), newest first. v1alpha1 is not among them: it was deprecated in OpenYurt
 * v1.0, and every release that serves it also serves v1beta1.
 */
export const READABLE_NODEPOOL_VERSIONS = ['v1beta2', 'v1beta1'] as const;

/** What a cluster serves of the NodePool group: its versions, and the one it prefers. */
export interface ServedGroup {
  versions: string[];
  preferred?: string;
}

/** What a cluster was found to serve of OpenYurt's NodePool: recorded per cluster by the audit. */
export interface OpenYurtObservation {
  /** The apiVersion the product reads there (`apps.openyurt.io/v1beta1`). */
  nodePoolApiVersion: string;
  /** Every NodePool version the cluster serves, its preferred one first. */
  nodePoolVersions: string[];
}

/** OpenYurt's own CRDs from v1.7.0 on: NodePool v1beta2 served in a group that still serves v1alpha1. */
export function servesOpenYurt17OrLater(nodePoolVersions: readonly string[]): boolean {
  return nodePoolVersions.includes('v1beta2') && nodePoolVersions.includes('v1alpha1');
}

/** Which OpenYurt releases serve these NodePool versions: one phrase for reports. */
export function releasesServing(nodePoolVersions: readonly string[]): string {
  if (servesOpenYurt17OrLater(nodePoolVersions)) return 'OpenYurt v1.7.0 or later';
  if (nodePoolVersions.includes('v1beta2')) return "pool-spirit's own NodePool CRD (no OpenYurt CRDs)";
  if (nodePoolVersions.includes('v1beta1')) return 'OpenYurt v1.0 – v1.6.x';
  return 'no readable NodePool version';
}

/** `NodePool v1beta1 (served: v1beta1, v1alpha1; OpenYurt v1.0 – v1.6.x)`: one line for reports. */
export function describeOpenYurt(o: OpenYurtObservation): string {
  const version = o.nodePoolApiVersion.split('/').pop();
  return `NodePool ${version} (served: ${o.nodePoolVersions.join(', ')}; ${releasesServing(o.nodePoolVersions)})`;
}

export type NodePoolVersionChoice =
  | { ok: true; apiVersion: string; version: string }
  | { ok: false; served: string[]; message: string };

/**
 * The served group from an APIGroup document (`GET /apis/apps.openyurt.io`); undefined when the document is
 * absent. Fields of another shape are ignored rather than trusted.
 */
export function servedGroupOf(doc: unknown): ServedGroup | undefined {
  if (typeof doc !== 'object' || doc === null) return undefined;
  const { versions, preferredVersion } = doc as { versions?: unknown; preferredVersion?: unknown };
  const versionOf = (v: unknown) =>
    typeof v === 'object' && v !== null && typeof (v as { version?: unknown }).version === 'string'
      ? (v as { version: string }).version
      : undefined;
  const list = Array.isArray(versions) ? versions.map(versionOf).filter((v): v is string => v !== undefined) : [];
  const preferred = versionOf(preferredVersion);
  return preferred ? { versions: list, preferred } : { versions: list };
}

/** The version to read, or why none can be read (naming what the cluster serves). */
export function chooseNodePoolVersion(group: ServedGroup | undefined, clusterId?: string): NodePoolVersionChoice {
  const served = group?.versions ?? [];
  const readable = (v: string | undefined): v is string =>
    v !== undefined && served.includes(v) && (READABLE_NODEPOOL_VERSIONS as readonly string[]).includes(v);
  const version = readable(group?.preferred) ? group.preferred : READABLE_NODEPOOL_VERSIONS.find(readable);
  if (version) return { ok: true, version, apiVersion: `${NODEPOOL_GROUP}/${version}` };
  const found = served.length ? `serves ${NODEPOOL_GROUP} ${served.join(', ')}` : `does not serve ${NODEPOOL_GROUP}`;
  return { ok: false, served, message: `${where(clusterId)} ${found}: ${NEEDED}` };
}

/**
 * Why a chosen version cannot be read after all: the group is served (OpenYurt's other CRDs share it) but has
 * no NodePool in it, as when the NodePool CRD alone was removed.
 */
export function nodePoolKindMissing(apiVersion: string, served: string[], clusterId?: string): string {
  return `${where(clusterId)} serves ${NODEPOOL_GROUP} ${served.join(', ')} but no NodePool in ${apiVersion}: ${NEEDED}`;
}

const where = (clusterId: string | undefined) => (clusterId ? `cluster ${clusterId}` : 'the cluster');
const NEEDED =
  `pool-spirit reads NodePool ${READABLE_NODEPOOL_VERSIONS.join(' or ')} ` +
  '(OpenYurt v1.0 and later, or infra/crds/nodepool.yaml on a cluster without OpenYurt)';
