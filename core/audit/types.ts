import type { KubeObject } from '../kube.ts';
import type { NodePool } from '../nodepool.ts';

export const SEVERITIES = ['critical', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const FINDING_KINDS = [
  'cluster-unreachable',
  'missing-pool-spirit',
  'unready',
  'stuck',
  'unreconciled',
  'orphan',
  'no-leader',
  'stale-leader',
  'flapping-leader',
  'etcd-near-quota',
  'etcd-alarm',
  'certificates-expiring',
  'spec-drift',
  'render-failed',
  'misplaced',
  'foreign-writer',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/** One thing the audit found wrong. `pool` is the NodePool name ('' for cluster-wide findings). */
export interface Finding {
  severity: Severity;
  kind: FindingKind;
  cluster: string;
  pool: string;
  /** What is wrong and why it matters, in a sentence a person can act on. */
  reason: string;
  /** Whether a reconcile of the pool repairs it (the audit then requests one). */
  fixable: boolean;
  /** `Kind namespace/name` of the object concerned, when there is one. */
  object?: string;
}

export type PoolHealthState = 'healthy' | 'degraded' | 'critical';

/** Per-pool figures kept in every audit record: the report's tiles and the history charts read them. */
export interface PoolHealth {
  pool: string;
  health: PoolHealthState;
  phase?: string;
  available: boolean;
  leader?: { holder?: string; renewTime?: string; transitions?: number };
  etcd?: { dbSizeBytes?: number; quotaBackendBytes?: number; alarms?: string[] };
  findings: number;
}

/** A past observation of a pool's leader (from earlier audit records or probe records). */
export interface LeaderSample {
  at: string;
  holder?: string;
  transitions?: number;
}

/** The latest leader-election probe record of a pool, if a probe function keeps them. */
export interface ProbeRecord {
  observedAt: string;
  holder?: string;
  renewTime?: string;
  transitions?: number;
  /** The probe's own verdict, when it gives one: healthy | no-leader | stale | flapping. */
  classification?: string;
  /** The probe's sentence explaining its verdict. */
  reason?: string;
}

/** What the rendered desired objects of a pool are, or why they could not be rendered. */
export type DesiredObjects = { objects: KubeObject[] } | { error: string };

/** Everything the audit reads of one cluster. Gathered by the audit function; no I/O happens here. */
export interface ClusterObservation {
  clusterId: string;
  nodePools: NodePool[];
  poolSpirits: KubeObject[];
  /** Every object labelled as pool-spirit's (app.kubernetes.io/managed-by=pool-spirit), pods excluded. */
  owned: KubeObject[];
  /** The pool-spirit pods. */
  pods: KubeObject[];
  nodes: KubeObject[];
  /** Rendered desired objects per pool name (only for pools whose PoolSpirit exists and parses). */
  desired: Record<string, DesiredObjects>;
  /**
   * Where yurt-coordinator compatibility is in effect: its pools, and kube-system's certs Secret as read
   * (undefined when it could not be: the pools' NotInstalled condition says so).
   */
  coordinator?: { compatPools: string[]; certsSecret?: KubeObject };
  /** Leader samples per pool from earlier audits and probes, oldest first. */
  leaderHistory?: Record<string, LeaderSample[]>;
  /** Latest probe record per pool. */
  probes?: Record<string, ProbeRecord>;
}

export interface AuditThresholds {
  /** A pool not Available for longer than this is stuck, not merely provisioning. */
  stuckAfterMs: number;
  /**
   * A leader that has not renewed for this long is stale. Longer than the status condition's 60 s: the
   * agent reports renewals periodically, and the audit should not flag a report that is merely due.
   */
  leaderStaleAfterMs: number;
  /** This many leader transitions within the window is flapping. */
  flappingTransitions: number;
  flappingWindowMs: number;
  /** Certificates expiring within this many days: warning (the reconciler renews 30 days ahead). */
  certificateWarningDays: number;
  /** ... within this many days (or expired): critical. */
  certificateCriticalDays: number;
}

export const DEFAULT_AUDIT_THRESHOLDS: AuditThresholds = {
  stuckAfterMs: 15 * 60_000,
  leaderStaleAfterMs: 5 * 60_000,
  flappingTransitions: 3,
  flappingWindowMs: 60 * 60_000,
  certificateWarningDays: 30,
  certificateCriticalDays: 7,
};

export interface ClusterAudit {
  cluster: string;
  findings: Finding[];
  pools: PoolHealth[];
}
