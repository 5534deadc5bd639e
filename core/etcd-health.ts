import type { PoolSpiritStatus } from './poolspirit/api.ts';

/**
 * Thresholds for the agent's etcd maintenance and the audit's drift checks, from measurements of etcd with
 * its data dir on tmpfs (500 Nodes + 1,000 Pods of ~8 KB, patch storms; figures in docs/probes.md): deleting data frees nothing until compaction + defragmentation, a defrag of an 86-256 MB db
 * blocks every request for 0.9-2.3 s and briefly adds 200-400 MB of RSS, and once the quota trips etcd
 * refuses every write until its NOSPACE alarm is disarmed.
 */
export const ETCD_MAINTENANCE = {
  /** Defragment only when it reclaims at least this much... */
  defragMinFreeBytes: 64 * 2 ** 20,
  /** ...and at least this share of the file: a defrag is a pause YurtHubs feel. */
  defragMinFreeRatio: 0.5,
  /** The audit flags a pool whose db file uses this share of its quota. */
  nearQuotaRatio: 0.8,
};

type EtcdStatus = NonNullable<PoolSpiritStatus['etcd']>;

/** Whether defragmenting now is worth its pause (always when the NOSPACE alarm is raised). */
export function etcdNeedsDefrag(etcd: EtcdStatus | undefined): boolean {
  if (!etcd?.dbSizeBytes) return false;
  if (etcd.alarms?.includes('NOSPACE')) return true;
  const free = etcd.dbSizeBytes - (etcd.dbSizeInUseBytes ?? etcd.dbSizeBytes);
  return free >= ETCD_MAINTENANCE.defragMinFreeBytes && free / etcd.dbSizeBytes >= ETCD_MAINTENANCE.defragMinFreeRatio;
}

/** Whether etcd is at or near its quota (or already refusing writes). */
export function etcdNearQuota(etcd: EtcdStatus | undefined): boolean {
  if (!etcd) return false;
  if (etcd.alarms?.includes('NOSPACE')) return true;
  if (!etcd.dbSizeBytes || !etcd.quotaBackendBytes) return false;
  return etcd.dbSizeBytes >= etcd.quotaBackendBytes * ETCD_MAINTENANCE.nearQuotaRatio;
}

/** Whether any certificate expires within `days` of `now` (the reconciler renews 30 days ahead by default). */
export function certificatesExpireWithin(status: PoolSpiritStatus | undefined, now: Date, days: number): boolean {
  const dates = [status?.certificates?.notAfter, status?.certificates?.caNotAfter]
    .filter((d): d is string => !!d)
    .map(Date.parse);
  return dates.some((t) => t - now.getTime() <= days * 86_400_000);
}
