/**
 * When an audit's result is worth a record of its own. Most audits of a converged cluster find what the last
 * one found: no findings, the same pools in the same health, the same leaders renewing their Leases. Storing
 * the whole record every run costs a write unit per kilobyte of it (it grows with the cluster's pools) and
 * says nothing new, so a run writes its full record only when what a reader acts on changed, or when the
 * daily heartbeat is due; otherwise it writes a small note naming the full record it found again
 * (`unchangedSince`), which readers expand into that record (adapters/state-table/audit-records.ts).
 *
 * What a reader acts on (`auditSubstance`): the findings as worded, each pool's health, phase, availability,
 * leader holder and transition counter, etcd alarms and quota, the reconciles requested, the error and the
 * OpenYurt versions served. Left out: the run's own id, time and duration; a leader's renewTime, which moves
 * on every renewal (a stale leader is a finding, so a leader that stops renewing is still written); and the
 * etcd database size below a step of its quota, since a live etcd's size creeps with every write (the
 * near-quota finding, and so a write, comes well before the quota).
 */
import { stableHash } from '../hash.ts';
import type { AuditRecord } from './report.ts';
import type { PoolHealth } from './types.ts';

/** A full record at least this often: far inside the records' retention, and a bound on how old a stored size is. */
export const DEFAULT_AUDIT_HEARTBEAT_MS = 24 * 3_600_000;

/** etcd sizes count as changed once they reach another 1/ETCD_SIZE_STEPS of the pool's quota. */
export const ETCD_SIZE_STEPS = 64;
/** The step when a pool reports no quota: a 64th of a pool's default quota (core/poolspirit/defaults.ts). */
export const ETCD_SIZE_STEP_WITHOUT_QUOTA = 8 * 2 ** 20;

/** The newest stored audit of a cluster before this run: a full record, or a note that one was found again. */
export interface RecordedAudit {
  /** The run's time. */
  at: string;
  /** The digest of what it says (`auditDigest`); records written before digests existed have none. */
  digest?: string;
  /** Set on a note: the `at` of the full record this run found again. */
  unchangedSince?: string;
}

export type AuditWriteReason = 'first' | 'changed' | 'heartbeat';

/** What a reader of the record acts on, without what moves on every run (see the module comment). */
export function auditSubstance(record: AuditRecord): unknown {
  return {
    findings: record.findings,
    pools: record.pools.map(poolSubstance),
    requested: record.requested,
    error: record.error ?? null,
    openYurt: record.openYurt ?? null,
  };
}

function poolSubstance(p: PoolHealth): unknown {
  const etcd = p.etcd;
  return {
    ...p,
    leader: p.leader ? { holder: p.leader.holder ?? null, transitions: p.leader.transitions ?? null } : null,
    etcd: etcd
      ? {
          alarms: etcd.alarms ?? null,
          quotaBackendBytes: etcd.quotaBackendBytes ?? null,
          dbSizeStep: etcdSizeStep(etcd.dbSizeBytes, etcd.quotaBackendBytes),
        }
      : null,
  };
}

/** Which step of its quota an etcd size is in (null without a size). */
export function etcdSizeStep(dbSizeBytes: number | undefined, quotaBackendBytes: number | undefined): number | null {
  if (typeof dbSizeBytes !== 'number' || !Number.isFinite(dbSizeBytes)) return null;
  const step =
    typeof quotaBackendBytes === 'number' && quotaBackendBytes > 0
      ? quotaBackendBytes / ETCD_SIZE_STEPS
      : ETCD_SIZE_STEP_WITHOUT_QUOTA;
  return Math.floor(dbSizeBytes / step);
}

export function auditDigest(record: AuditRecord): string {
  return stableHash(auditSubstance(record));
}

/**
 * Why this run's record must be written in full, or undefined when a note naming the last full record says
 * it all. `previous` is the newest stored audit of the cluster from an earlier run (a repeated delivery of
 * the same run decides as the first delivery did: pass the run before it).
 */
export function auditWriteReason(
  previous: RecordedAudit | undefined,
  digest: string,
  now: Date,
  heartbeatMs: number = DEFAULT_AUDIT_HEARTBEAT_MS,
): AuditWriteReason | undefined {
  if (!previous) return 'first';
  if (previous.digest !== digest) return 'changed';
  const fullAt = Date.parse(previous.unchangedSince ?? previous.at);
  if (!(now.getTime() - fullAt < heartbeatMs)) return 'heartbeat';
  return undefined;
}

/** The full record a note written now refers to: the previous one's, or the previous record itself. */
export function unchangedSince(previous: RecordedAudit): string {
  return previous.unchangedSince ?? previous.at;
}
