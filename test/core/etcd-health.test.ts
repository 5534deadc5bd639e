import { describe, expect, it } from 'vitest';
import { certificatesExpireWithin, etcdNearQuota, etcdNeedsDefrag, managedSelector } from '../../core/index.ts';

const MiB = 2 ** 20;

describe('etcd maintenance thresholds', () => {
  it('defragments only when it reclaims a lot, or when the quota alarm is raised', () => {
    expect(etcdNeedsDefrag({ dbSizeBytes: 300 * MiB, dbSizeInUseBytes: 100 * MiB })).toBe(true);
    expect(etcdNeedsDefrag({ dbSizeBytes: 300 * MiB, dbSizeInUseBytes: 250 * MiB })).toBe(false);
    expect(etcdNeedsDefrag({ dbSizeBytes: 40 * MiB, dbSizeInUseBytes: 1 * MiB })).toBe(false);
    expect(etcdNeedsDefrag({ dbSizeBytes: 40 * MiB, dbSizeInUseBytes: 40 * MiB, alarms: ['NOSPACE'] })).toBe(true);
    expect(etcdNeedsDefrag(undefined)).toBe(false);
  });

  it('flags a db at 80% of its quota', () => {
    expect(etcdNearQuota({ dbSizeBytes: 420 * MiB, quotaBackendBytes: 512 * MiB })).toBe(true);
    expect(etcdNearQuota({ dbSizeBytes: 300 * MiB, quotaBackendBytes: 512 * MiB })).toBe(false);
  });

  it('flags certificates near expiry', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(certificatesExpireWithin({ certificates: { notAfter: '2026-01-20T00:00:00Z' } }, now, 30)).toBe(true);
    expect(
      certificatesExpireWithin(
        { certificates: { notAfter: '2026-06-01T00:00:00Z', caNotAfter: '2035-01-01T00:00:00Z' } },
        now,
        30,
      ),
    ).toBe(false);
  });

  it('selects a pool’s objects by label', () => {
    expect(managedSelector('hangzhou')).toBe('app.kubernetes.io/managed-by=pool-spirit,poolspirit.io/pool=hangzhou');
  });
});
