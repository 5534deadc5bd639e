/**
 * The rollout model: what a rollout asks for (RolloutSpec), where it stands (RolloutState: the store keeps
 * its clusters' progress in an item per cluster and re-assembles it), and what a tick saw in the clusters
 * (ClusterObservation). Plain JSON throughout: the state is stored as is (split, not transformed) and the
 * observations come from whatever adapter read the clusters.
 */

/** A count of clusters, absolute or as a share of the rollout's clusters. */
export type Limit = { count: number } | { percent: number };

export interface RolloutSpec {
  id: string;
  /**
   * JSON merge patch on the PoolSpirit spec (RFC 7396, without `null`: see spec-patch.ts). A bundle
   * version rollout (`--version V`) is the patch `{version: V}`.
   */
  patch: Record<string, unknown>;
  /** Cluster registry labels every targeted cluster carries. */
  selector: Record<string, string>;
  /** Clusters updated first, alone; any failure among them stops the rollout. */
  canary?: { clusters: string[] } | { count: number };
  /** Clusters changing (Updating, Soaking, RollingBack) at once; at least 1. */
  maxConcurrency: Limit;
  /** Failed clusters tolerated; one more stops the rollout. */
  maxFailures: Limit;
  /** How long every pool of a cluster must stay healthy at the new version before the cluster counts. */
  soakMs: number;
  /** How long a cluster may take from its update to healthy before it fails. */
  progressDeadlineMs: number;
  /** On a stop (or a failed cluster), restore the previous spec of every cluster already changed. */
  autoRollback: boolean;
}

export const CLUSTER_PHASES = [
  'Pending',
  'Updating',
  'Soaking',
  'Succeeded',
  'Failed',
  'RollingBack',
  'RolledBack',
] as const;
export type ClusterPhase = (typeof CLUSTER_PHASES)[number];
export const ROLLOUT_PHASES = [
  'Progressing',
  'Paused',
  'RollingBack',
  'Succeeded',
  'Failed',
  'Aborted',
  'RolledBack',
] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

/** Phases a rollout never leaves by itself (a manual rollback is still possible from them). */
export const TERMINAL_PHASES: readonly RolloutPhase[] = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

export interface PoolProgress {
  /** Available=True for the current generation. */
  available: boolean;
  /** Running the versions the current spec asks for. */
  atVersion: boolean;
  /** LeaderElected=True. */
  leaderHealthy: boolean;
  /** The live spec carries the rollout's patch. */
  specApplied: boolean;
  /** Why the pool does not count as healthy yet (absent when it does). */
  reason?: string;
}

export interface ClusterProgress {
  id: string;
  phase: ClusterPhase;
  canary: boolean;
  wave?: number;
  startedAt?: string;
  soakStartedAt?: string;
  finishedAt?: string;
  rollbackStartedAt?: string;
  /** The cluster failed (it may have been rolled back since: phase then says RollingBack/RolledBack). */
  failed?: boolean;
  reason?: string;
  /** Time of the newest observation folded in; older ones (reordered deliveries) are ignored. */
  observedAt?: string;
  /** PoolSpirits in the cluster at the last observation, and how many were healthy at the target. */
  poolCount?: number;
  healthyPools?: number;
  /**
   * The pools that are not healthy at the target, with why. Healthy pools are only counted: they would
   * otherwise be most of the cluster's stored progress (and of the write units of every change to it).
   */
  pools: Record<string, PoolProgress>;
}

export interface RolloutState {
  id: string;
  spec: RolloutSpec;
  phase: RolloutPhase;
  reason?: string;
  /** Number of the newest wave started (0 before the first). */
  wave: number;
  /** Bumped by every stored transition; the store writes only if it still holds the version it read. */
  version: number;
  createdAt: string;
  updatedAt: string;
  /** In rollout order: canaries first, then the rest by id. */
  clusters: ClusterProgress[];
}

/** One PoolSpirit as a tick saw it (see observe.ts for how a live object becomes this). */
export interface PoolObservation {
  name: string;
  specAtTarget: boolean;
  /** The live spec equals the pre-rollout snapshot on the patched fields (true when nothing was changed). */
  specAtPrevious: boolean;
  available: boolean;
  atVersion: boolean;
  leaderHealthy: boolean;
  /** Set when the current spec is rejected (phase Invalid at the current generation). */
  invalid?: string;
  reason?: string;
}

export interface ClusterObservation {
  clusterId: string;
  /** When the cluster was read (ISO). */
  observedAt: string;
  pools: PoolObservation[];
  /** The cluster could not be read (unreachable, not registered, ...). */
  error?: string;
}

export type RolloutAction = { kind: 'apply-version'; clusterId: string } | { kind: 'rollback'; clusterId: string };

export type RolloutCommand =
  | { command: 'pause'; by?: string }
  | { command: 'resume'; by?: string }
  | { command: 'abort'; by?: string }
  | { command: 'rollback'; by?: string };

export interface Decision {
  state: RolloutState;
  actions: RolloutAction[];
  /** The state differs from the input (a write is needed). */
  changed: boolean;
}
