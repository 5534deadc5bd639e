/**
 * The two etcd configurations the patch storm compares.
 *
 * `product`: what a pool-spirit's etcd container is rendered with (core/poolspirit/defaults.ts
 * DEFAULT_ETCD_STORAGE, via the same flags core/render/containers.ts writes), not dev/local/etcd's
 * `etcdFlags.product` preset: the rendered pod is what runs at the edge, so it is what the probe measures.
 * `diffFromLaunchPreset()` says where the local launcher's preset disagrees.
 *
 * `upstream`: OpenYurt's yurt-coordinator etcd (its v1.6 Helm chart): snapshot-count 10000, no quota, no
 * compaction. The pod is rendered with the product's flags and a profile only replaces flags, so the
 * upstream set also resets each product-only flag to etcd's own default (quota 0 = etcd's 2 GiB default, retention 0 = off,
 * 5 WALs / 5 snapshots).
 */
import { DEFAULT_ETCD_STORAGE, DEFAULT_RESOURCES } from '../../core/poolspirit/defaults.ts';
import { etcdFlags } from '../../core/poolspirit/etcd-flags.ts';
import { quantityBytes } from '../../core/quantity.ts';

export type EtcdProfile = 'product' | 'upstream';

export interface EtcdSettings {
  profile: EtcdProfile;
  flags: Record<string, string>;
  /** The memory limit the etcd container runs under (RSS + tmpfs must stay below it). */
  memoryLimitBytes: number;
  /** Backend quota in bytes (etcd's 2 GiB default when the flags set none). */
  quotaBackendBytes: number;
}

const ETCD_DEFAULT_QUOTA_BYTES = 2 * 2 ** 30;
/** yurt-coordinator's etcd container limit. */
const UPSTREAM_MEMORY_LIMIT = '512Mi';

export function productEtcdSettings(storage = DEFAULT_ETCD_STORAGE, limit = etcdMemoryLimit()): EtcdSettings {
  const quota = quantityBytes(storage.quotaBackendBytes);
  return {
    profile: 'product',
    flags: {
      'quota-backend-bytes': String(quota),
      'auto-compaction-mode': storage.autoCompaction.mode,
      'auto-compaction-retention': storage.autoCompaction.retention,
      'snapshot-count': String(storage.snapshotCount),
      'max-wals': String(storage.maxWals),
      'max-snapshots': String(storage.maxSnapshots),
    },
    memoryLimitBytes: quantityBytes(limit),
    quotaBackendBytes: quota,
  };
}

export function upstreamEtcdSettings(): EtcdSettings {
  return {
    profile: 'upstream',
    flags: {
      ...etcdFlags.upstream,
      'quota-backend-bytes': '0',
      'auto-compaction-mode': 'periodic',
      'auto-compaction-retention': '0',
      'max-wals': '5',
      'max-snapshots': '5',
    },
    memoryLimitBytes: quantityBytes(UPSTREAM_MEMORY_LIMIT),
    quotaBackendBytes: ETCD_DEFAULT_QUOTA_BYTES,
  };
}

export function settingsFor(profile: EtcdProfile): EtcdSettings {
  return profile === 'product' ? productEtcdSettings() : upstreamEtcdSettings();
}

/** Flags where dev/local/etcd's `etcdFlags.product` preset differs from the rendered product defaults. */
export function diffFromLaunchPreset(): Array<{ flag: string; rendered: string; launchPreset: string | undefined }> {
  const rendered = productEtcdSettings().flags;
  const preset: Record<string, string> = etcdFlags.product;
  const out: Array<{ flag: string; rendered: string; launchPreset: string | undefined }> = [];
  for (const [flag, value] of Object.entries(rendered)) {
    const other = preset[flag];
    const same =
      other === value ||
      (flag === 'quota-backend-bytes' && other !== undefined && quantityBytes(other) === quantityBytes(value));
    if (!same) out.push({ flag, rendered: value, launchPreset: other });
  }
  return out;
}

/** The rendered etcd container's memory limit: the probe's verdict is judged against it. */
function etcdMemoryLimit(): string | number {
  const limit = DEFAULT_RESOURCES.etcd.limits.memory;
  if (limit === undefined)
    throw new Error('core/poolspirit/defaults.ts: DEFAULT_RESOURCES.etcd.limits.memory is not set');
  return limit;
}
