/**
 * etcd health report and maintenance decisions. Pure: readings in, the report and what to do out.
 *
 * Defragmentation rule, the same one the audit checks (core/etcd-health.ts ETCD_MAINTENANCE): defragment
 * when it reclaims at least minFreeBytes AND at least minFreeRatio of the file (fragmentation = 1 -
 * inUse/dbSize). A defrag blocks every request for about a second per 100 MB, so small or slightly
 * fragmented files are left alone, and a cooldown stops a file that stays big (data really that large) from
 * being defragmented on every tick. Under the NOSPACE alarm etcd refuses all writes, so the agent compacts
 * to the current revision, defragments, and disarms the alarm once the file is back under the quota
 * (etcd never clears the alarm by itself, not even after compaction and defrag).
 */
import { ETCD_MAINTENANCE } from '../../core/etcd-health.ts';
import type { PoolSpiritStatus } from '../../core/poolspirit/api.ts';

export type EtcdStatus = NonNullable<PoolSpiritStatus['etcd']>;

export const NOSPACE = 'NOSPACE';

/** One reading of etcd; sizes, alarms and revision are absent when only the health URL is configured. */
export interface EtcdReading {
  dbSizeBytes?: number;
  dbSizeInUseBytes?: number;
  /** Raised alarm names (NOSPACE, CORRUPT), de-duplicated over members. */
  alarms?: string[];
  /** The member's current revision, the target of an emergency compaction. */
  revision?: number;
  /** etcd's /health answer when a health URL is configured; undefined when not asked. */
  healthEndpointOk?: boolean;
}

export interface DefragPolicy {
  minFreeRatio: number;
  minFreeBytes: number;
  cooldownMs: number;
}

export const DEFAULT_DEFRAG_POLICY: DefragPolicy = {
  minFreeRatio: ETCD_MAINTENANCE.defragMinFreeRatio,
  minFreeBytes: ETCD_MAINTENANCE.defragMinFreeBytes,
  cooldownMs: 5 * 60_000,
};

export function etcdReport(reading: EtcdReading, quotaBackendBytes: number | undefined, observedAt: Date): EtcdStatus {
  const alarms = reading.alarms ? [...new Set(reading.alarms)].sort() : undefined;
  const report: EtcdStatus = { healthy: (alarms ?? []).length === 0 && reading.healthEndpointOk !== false };
  if (reading.dbSizeBytes !== undefined) report.dbSizeBytes = reading.dbSizeBytes;
  if (reading.dbSizeInUseBytes !== undefined) report.dbSizeInUseBytes = reading.dbSizeInUseBytes;
  if (quotaBackendBytes !== undefined) report.quotaBackendBytes = quotaBackendBytes;
  if (alarms) report.alarms = alarms;
  report.observedTime = observedAt.toISOString();
  return report;
}

export function fragmentation(reading: Pick<EtcdReading, 'dbSizeBytes' | 'dbSizeInUseBytes'>): number {
  if (reading.dbSizeBytes === undefined || reading.dbSizeInUseBytes === undefined || reading.dbSizeBytes <= 0) return 0;
  return Math.max(0, 1 - reading.dbSizeInUseBytes / reading.dbSizeBytes);
}

export type Maintenance =
  | { kind: 'none' }
  | { kind: 'defrag'; compactTo?: number; disarmIfUnderQuota: boolean; reason: string }
  | { kind: 'disarm'; reason: string };

export function decideMaintenance(
  reading: EtcdReading,
  policy: DefragPolicy,
  quotaBackendBytes: number | undefined,
  lastDefragAt: number | undefined,
  now: number,
): Maintenance {
  const { dbSizeBytes, dbSizeInUseBytes, revision } = reading;
  if (dbSizeBytes === undefined || dbSizeInUseBytes === undefined || revision === undefined) return { kind: 'none' };
  const coolingDown = lastDefragAt !== undefined && now - lastDefragAt < policy.cooldownMs;
  if (reading.alarms?.includes(NOSPACE)) {
    if (!coolingDown) {
      return {
        kind: 'defrag',
        compactTo: revision,
        disarmIfUnderQuota: true,
        reason: 'NOSPACE alarm raised: compact and defragment to free space',
      };
    }
    if (underQuota(dbSizeBytes, quotaBackendBytes))
      return { kind: 'disarm', reason: 'NOSPACE alarm raised but the db file is under the quota again' };
    return { kind: 'none' };
  }
  if (coolingDown) return { kind: 'none' };
  const free = dbSizeBytes - dbSizeInUseBytes;
  const ratio = fragmentation(reading);
  if (free > 0 && free >= policy.minFreeBytes && ratio >= policy.minFreeRatio) {
    return {
      kind: 'defrag',
      disarmIfUnderQuota: false,
      reason: `fragmentation ${ratio.toFixed(2)} (${free} bytes free)`,
    };
  }
  return { kind: 'none' };
}

/** Disarming while still over the quota would only let the next write trip the alarm again. */
export function underQuota(dbSizeBytes: number, quotaBackendBytes: number | undefined): boolean {
  return quotaBackendBytes !== undefined && quotaBackendBytes > 0 && dbSizeBytes < quotaBackendBytes;
}

/** Changes a reader must see at once; sizes alone wait for the periodic report. */
export function etcdChangedMeaningfully(before: EtcdStatus | undefined, after: EtcdStatus): boolean {
  if (!before) return true;
  return (
    before.healthy !== after.healthy ||
    before.quotaBackendBytes !== after.quotaBackendBytes ||
    before.lastDefragTime !== after.lastDefragTime ||
    (before.alarms ?? []).join(',') !== (after.alarms ?? []).join(',')
  );
}
