import { quantityBytes } from '../quantity.ts';
import { DEFAULT_ETCD_STORAGE } from './defaults.ts';

/**
 * etcd flag presets, without the leading `--`. `product` is what a pool-spirit runs with; `upstream` is the
 * OpenYurt pool-coordinator's etcd, kept so the capacity probe can show both side by side.
 *
 * `product` is derived from the core's storage defaults (DEFAULT_ETCD_STORAGE in defaults.ts,
 * the values the pool-spirit workload is rendered with), so a local pool-spirit and the capacity probe
 * run exactly what the edge runs; the reasons for each value are documented there. (It used to carry its
 * own copy, which had drifted: a 256 MiB quota and 5-minute compaction against the rendered 512Mi / 1m.)
 */
export const etcdFlags = {
  product: {
    'snapshot-count': String(DEFAULT_ETCD_STORAGE.snapshotCount),
    'max-wals': String(DEFAULT_ETCD_STORAGE.maxWals),
    'max-snapshots': String(DEFAULT_ETCD_STORAGE.maxSnapshots),
    'quota-backend-bytes': String(quantityBytes(DEFAULT_ETCD_STORAGE.quotaBackendBytes)),
    'auto-compaction-mode': DEFAULT_ETCD_STORAGE.autoCompaction.mode,
    'auto-compaction-retention': DEFAULT_ETCD_STORAGE.autoCompaction.retention,
  },
  upstream: {
    'snapshot-count': '10000',
    'max-txn-ops': '102400',
    'max-request-bytes': '100000000',
  },
} as const satisfies Record<string, Record<string, string>>;
