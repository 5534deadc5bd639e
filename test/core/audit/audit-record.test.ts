import { describe, expect, it } from 'vitest';
import {
  type AuditRecord,
  auditCluster,
  auditDigest,
  auditWriteReason,
  DEFAULT_AUDIT_HEARTBEAT_MS,
  type RecordedAudit,
  unchangedSince,
} from '../../../core/audit/index.ts';
import { CLUSTER, healthyCluster, NOW } from './world.ts';

const MI = 2 ** 20;
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const MINUTE = 60_000;

/** A record of the healthy world, as a run at `at` would store it. */
async function record(
  change: (obs: Awaited<ReturnType<typeof healthyCluster>>) => void = () => {},
  at = NOW.toISOString(),
): Promise<AuditRecord> {
  const obs = await healthyCluster();
  change(obs);
  const a = auditCluster(obs, { now: NOW });
  return {
    cluster: CLUSTER,
    runId: `run-${at}`,
    at,
    durationMs: 40,
    findings: a.findings,
    pools: a.pools,
    requested: [],
  };
}

const statusOf = (obs: Awaited<ReturnType<typeof healthyCluster>>, i = 0) =>
  obs.poolSpirits[i].status as {
    leader: { holder?: string; renewTime?: string; transitions?: number };
    etcd: { dbSizeBytes?: number; quotaBackendBytes?: number; alarms?: string[] };
    phase?: string;
  };

/** What the previous run stored: a full record of `r` at `at`. */
const stored = (r: AuditRecord, at: string): RecordedAudit => ({ at, digest: auditDigest(r) });

describe('auditWriteReason', () => {
  it('writes the first record of a cluster', async () => {
    expect(auditWriteReason(undefined, auditDigest(await record()), NOW)).toBe('first');
  });

  it('does not write a run that found what the last one found, whatever its own id, time and duration', async () => {
    const before = await record(undefined, ago(10 * MINUTE));
    const now = { ...(await record()), runId: 'another', durationMs: 90 };
    expect(auditDigest(now)).toBe(auditDigest(before));
    expect(auditWriteReason(stored(before, before.at), auditDigest(now), NOW)).toBeUndefined();
  });

  it('does not count a leader renewal as a change, nor an etcd size within the same step of its quota', async () => {
    const before = await record();
    const now = await record((obs) => {
      const s = statusOf(obs);
      s.leader.renewTime = ago(1_000);
      // 40 MiB → 47 MiB: the same 1/64 of a 512 MiB quota (8 MiB steps).
      s.etcd.dbSizeBytes = 47 * MI;
    });
    expect(now.pools[0].leader?.renewTime).not.toBe(before.pools[0].leader?.renewTime);
    expect(auditDigest(now)).toBe(auditDigest(before));
  });

  it('writes what a reader acts on when it changes', async () => {
    const before = await record();
    const changes: Record<string, (obs: Awaited<ReturnType<typeof healthyCluster>>) => void> = {
      holder: (obs) => {
        statusOf(obs).leader.holder = 'hangzhou-node-1';
      },
      transitions: (obs) => {
        statusOf(obs).leader.transitions = 3;
      },
      'etcd step': (obs) => {
        statusOf(obs).etcd.dbSizeBytes = 48 * MI;
      },
      'etcd alarm': (obs) => {
        statusOf(obs).etcd.alarms = ['NOSPACE'];
      },
      phase: (obs) => {
        statusOf(obs).phase = 'Degraded';
      },
      finding: (obs) => {
        obs.owned = obs.owned.filter((o) => o.kind !== 'Service');
      },
    };
    for (const [what, change] of Object.entries(changes)) {
      const now = await record(change);
      expect(auditWriteReason(stored(before, ago(MINUTE)), auditDigest(now), NOW), what).toBe('changed');
    }
    for (const now of [
      { ...before, requested: ['hangzhou'] },
      { ...before, error: 'cluster could not be audited: timeout' },
      { ...before, openYurt: { nodePoolApiVersion: 'apps.openyurt.io/v1beta2', nodePoolVersions: ['v1beta2'] } },
    ])
      expect(auditWriteReason(stored(before, ago(MINUTE)), auditDigest(now), NOW)).toBe('changed');
  });

  it('steps etcd sizes by 8 MiB when no quota is reported', async () => {
    const noQuota = (size: number) =>
      record((obs) => {
        const s = statusOf(obs);
        s.etcd.quotaBackendBytes = undefined;
        s.etcd.dbSizeBytes = size;
      });
    expect(auditDigest(await noQuota(40 * MI))).toBe(auditDigest(await noQuota(47 * MI)));
    expect(auditDigest(await noQuota(40 * MI))).not.toBe(auditDigest(await noQuota(48 * MI)));
  });

  it('writes an unchanged cluster in full once the full record it repeats is a heartbeat old, and not before', async () => {
    const digest = auditDigest(await record());
    const justInside = ago(DEFAULT_AUDIT_HEARTBEAT_MS - MINUTE);
    // The previous run was a note: the heartbeat counts from the full record it named, not from the note.
    expect(auditWriteReason({ at: ago(10 * MINUTE), digest, unchangedSince: justInside }, digest, NOW)).toBeUndefined();
    expect(
      auditWriteReason({ at: ago(10 * MINUTE), digest, unchangedSince: ago(DEFAULT_AUDIT_HEARTBEAT_MS) }, digest, NOW),
    ).toBe('heartbeat');
    expect(auditWriteReason({ at: ago(DEFAULT_AUDIT_HEARTBEAT_MS + 1), digest }, digest, NOW)).toBe('heartbeat');
    expect(auditWriteReason({ at: ago(2 * MINUTE), digest }, digest, NOW, MINUTE)).toBe('heartbeat');
  });

  it('writes in full after a record stored before digests existed', async () => {
    const r = await record();
    expect(auditWriteReason({ at: ago(10 * MINUTE) }, auditDigest(r), NOW)).toBe('changed');
  });
});

describe('unchangedSince', () => {
  it('names the full record, never a note', () => {
    expect(unchangedSince({ at: ago(10 * MINUTE), digest: 'd' })).toBe(ago(10 * MINUTE));
    expect(unchangedSince({ at: ago(10 * MINUTE), digest: 'd', unchangedSince: ago(60 * MINUTE) })).toBe(
      ago(60 * MINUTE),
    );
  });
});
