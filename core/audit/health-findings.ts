import { etcdNearQuota } from '../etcd-health.ts';
import type { PoolSpiritStatus } from '../poolspirit/api.ts';
import { bytes } from './text.ts';
import type { AuditThresholds, Finding } from './types.ts';

/** etcd as the agent reports it: alarms and unhealthy (critical), near quota (warning). The agent defrags. */
export function etcdFindings(cluster: string, pool: string, status: PoolSpiritStatus | undefined): Finding[] {
  const etcd = status?.etcd;
  if (!etcd) return [];
  const base = { cluster, pool, fixable: false as const };
  const findings: Finding[] = [];
  const alarms = etcd.alarms ?? [];
  if (alarms.length > 0) {
    const nospace = alarms.includes('NOSPACE');
    findings.push({
      ...base,
      severity: 'critical',
      kind: 'etcd-alarm',
      reason: `etcd raised alarm ${alarms.join(', ')}${nospace ? ': it refuses every write until compacted, defragmented and disarmed' : ''}`,
    });
  } else if (etcd.healthy === false) {
    findings.push({ ...base, severity: 'critical', kind: 'etcd-alarm', reason: 'the agent reports etcd unhealthy' });
  }
  // Without NOSPACE, etcdNearQuota holds only when both sizes are known (non-zero).
  const { dbSizeBytes, quotaBackendBytes } = etcd;
  if (etcdNearQuota(etcd) && !alarms.includes('NOSPACE') && dbSizeBytes && quotaBackendBytes) {
    const share = Math.round((dbSizeBytes / quotaBackendBytes) * 100);
    findings.push({
      ...base,
      severity: 'warning',
      kind: 'etcd-near-quota',
      reason: `etcd database is ${bytes(dbSizeBytes)}, ${share}% of its ${bytes(quotaBackendBytes)} quota: at the quota etcd stops taking writes`,
    });
  }
  return findings;
}

/**
 * Certificates near expiry. The reconciler renews 30 days ahead, so a certificate this close to expiry
 * means no reconcile ran since: a reconcile renews it (fixable).
 */
export function certificateFindings(
  cluster: string,
  pool: string,
  status: PoolSpiritStatus | undefined,
  now: Date,
  t: AuditThresholds,
): Finding[] {
  const certs = status?.certificates;
  const dates = [
    { what: 'leaf certificates', at: certs?.notAfter },
    { what: 'CA', at: certs?.caNotAfter },
  ].filter((d): d is { what: string; at: string } => !!d.at && Number.isFinite(Date.parse(d.at)));
  if (dates.length === 0) return [];
  const first = dates.reduce((a, b) => (Date.parse(a.at) <= Date.parse(b.at) ? a : b));
  const days = (Date.parse(first.at) - now.getTime()) / 86_400_000;
  if (days > t.certificateWarningDays) return [];
  const when = days <= 0 ? `expired at ${first.at}` : `expire at ${first.at} (in ${Math.floor(days)} days)`;
  return [
    {
      cluster,
      pool,
      severity: days <= t.certificateCriticalDays ? 'critical' : 'warning',
      kind: 'certificates-expiring',
      reason: `${first.what} ${when}; the reconciler renews ${t.certificateWarningDays} days ahead, so a reconcile renews them`,
      fixable: true,
    },
  ];
}
