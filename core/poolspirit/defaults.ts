import type { ComponentName } from './api.ts';

/**
 * Product defaults. Kept out of the CRD (see api.ts) so that a new default reaches every pool that did not
 * pin a value.
 */

export type BundleVersions = Record<ComponentName, string>;
/** Bundle version → component versions. A rollout moves pools from one bundle to the next. */
export type BundleCatalog = Record<string, BundleVersions>;

/**
 * Releases in upstream support. The local stack builds each of them from pinned Go modules (tools/kube,
 * tools/kube-next, tools/etcd) and its catalog of local binaries (dev/local/kube-bins) realises each bundle, so a
 * rollout between them in the tests upgrades one real kube-apiserver to the next.
 */
export const DEFAULT_BUNDLES: BundleCatalog = {
  '0.1.0': { apiServer: 'v1.36.3', etcd: '3.6.16-0', agent: '0.1.0' },
  // Same etcd: a bundle step changes one minor of kube-apiserver, as kube's version-skew policy allows.
  '0.2.0': { apiServer: 'v1.37.2', etcd: '3.6.16-0', agent: '0.2.0' },
};
export const DEFAULT_BUNDLE_VERSION = '0.1.0';

/**
 * Repositories the rendered pod pulls `<repository>:<version>` from. Pin a digest by setting a component's
 * image to `<repository>@sha256:…` in the PoolSpirit (the digest wins; docs/images.md): the agent by the
 * digest of your own build (`npm run images -- --json`) in your registry, kube-apiserver and etcd by upstream's.
 * No digest is kept here: a build's digest includes its commit's time, so one written into the repository
 * would name the build of the commit before. The local node imports `npm run images`'s stand-ins for
 * registry.k8s.io's images under these same references.
 */
export const DEFAULT_IMAGES: Record<ComponentName, string> = {
  apiServer: 'registry.k8s.io/kube-apiserver',
  etcd: 'registry.k8s.io/etcd',
  agent: 'ghcr.io/pool-spirit/agent',
};

export interface ResourceRequirements {
  requests: Record<string, string | number>;
  limits: Record<string, string | number>;
}

/**
 * Measured on the real pool-spirit (kube-apiserver v1.36.3 + etcd 3.6.16, the rendered flags) at 500 Nodes,
 * 1,000 Pods of 8 KB and 500 contenders: as processes (`spiritctl probe capacity --local`, RSS and tmpfs
 * counted by hand, probe/capacity/measured-peaks.json) and as the pod on a real node, in its cgroups, through
 * 600 s patch storms (`--local --kubelet real`, probe/capacity/measured-node-peaks.json; docs/probes.md). A
 * request covers the highest peak, a limit the peak × 1.5; test/core/poolspirit/resource-limits.test.ts checks
 * both sets. The agent (Node.js) holds more than its first request guessed: its working set is above 32Mi idle.
 * No CPU limits: throttling an apiserver that YurtHubs elect through only makes leases miss their renew deadline.
 *
 * etcd's memory limit must hold its RSS *and* the in-memory data volume, because tmpfs pages are charged to
 * the container that writes them: sizeLimit (1Gi) + RSS + a defrag spike (200-400 MB measured) → 2Gi, well
 * above the measured peak × 1.5. The upstream 512Mi limit was crossed after about 70 s of the patch storm.
 */
export const DEFAULT_RESOURCES: Record<ComponentName, ResourceRequirements> = {
  apiServer: { requests: { cpu: '100m', memory: '640Mi' }, limits: { memory: '1Gi' } },
  etcd: { requests: { cpu: '100m', memory: '512Mi' }, limits: { memory: '2Gi' } },
  agent: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '128Mi' } },
};

/** etcd preallocates a 64 MB WAL segment plus a 64 MB spare before any data (measured: 122 MB of tmpfs). */
export const ETCD_WAL_PREALLOCATION_BYTES = 128 * 2 ** 20;

/**
 * Storage defaults, chosen from measurements of etcd 3.4/3.5 with its data dir on tmpfs (docs/probes.md):
 * - quota 512Mi: without a quota a patch storm grew the db to 681 MB in 120 s and RSS + tmpfs past 3 GB;
 *   with a quota, etcd refuses writes (NOSPACE) instead of being OOM-killed. 512Mi + 128Mi of WAL stays
 *   inside the 1Gi volume. (The agent compacts, defragments and disarms NOSPACE; etcd keeps the alarm set
 *   until someone disarms it.)
 * - periodic compaction every 10 s: revision mode in etcd 3.4 only checks every 5 minutes and never
 *   compacted during a 2-minute storm. Periodic keeps between one and two retention periods of history:
 *   with 1m the capacity probe's 120 s patch storm (through the API, ~85 updates/s) kept growing (db in use
 *   20 → 137 MB, memory +25 % in the last third), and at a real apiserver's ~650 updates/s of 8 KB objects
 *   two minutes of history is ~1.5 GB, far past the quota: NOSPACE, and every YurtHub Lease renewal fails.
 *   With 10s the same storm held the db file at 82 MB (in use 38-56 MB) and etcd memory (RSS + tmpfs) at
 *   0.59-0.72 GB, flat, while upstream's settings grew to 1.3 GB (docs/probes.md). kube-apiserver serves
 *   watches from its own cache, so 10 s of etcd history costs clients nothing.
 * - snapshot-count 5000 and max-wals 1: the raft log is held in memory until a snapshot (default 100000
 *   entries); 5000 + one WAL kept RSS + tmpfs between 0.42 and 0.75 GB under the storm, 10000 alone
 *   reached 0.94 GB. max-snapshots 1: older snapshots are worthless for data that never survives the pod.
 */
export const DEFAULT_ETCD_STORAGE = {
  medium: 'Memory' as const,
  sizeLimit: '1Gi',
  quotaBackendBytes: '512Mi',
  autoCompaction: { mode: 'periodic' as const, retention: '10s' },
  snapshotCount: 5000,
  maxWals: 1,
  maxSnapshots: 1,
};

/** etcd recommends a backend of at most 8 GB. */
export const MAX_QUOTA_BACKEND_BYTES = 8 * 2 ** 30;
