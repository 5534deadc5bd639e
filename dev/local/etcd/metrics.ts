/**
 * What the capacity probe and the agent need to know about an etcd, and the maintenance they perform.
 * "Memory" of an etcd whose data dir is in tmpfs is processRssBytes(pid) + dirBytes(dataDir): a
 * `medium: Memory` emptyDir is charged to the pod's memory limit, so RSS alone proves nothing.
 */
import type { Etcd3 } from 'etcd3';
import { createEtcdClient, isCompactedError } from './client.ts';

export interface EtcdStatus {
  version: string;
  /** Bytes the backend db file occupies (what the quota is checked against). */
  dbSizeBytes: number;
  /** Bytes of the db actually in use; dbSizeBytes - dbSizeInUseBytes is what a defrag gives back. */
  dbSizeInUseBytes: number;
  raftIndex: number;
  raftAppliedIndex: number;
  raftTerm: number;
  /** Current store revision. */
  revision: number;
  leader: string;
  /** Active alarms, e.g. `['NOSPACE']`; writes fail while NOSPACE is set. */
  alarms: string[];
}

/** Opens a short-lived client: these are occasional calls from probes and agents, not a hot path. */
async function withClient<T>(endpoint: string, fn: (client: Etcd3) => Promise<T>): Promise<T> {
  const client = createEtcdClient([endpoint], 'etcd endpoint');
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

export function etcdStatus(endpoint: string): Promise<EtcdStatus> {
  return withClient(endpoint, async (client) => {
    const [status, alarms] = await Promise.all([
      client.maintenance.status(),
      client.maintenance.alarm({ action: 'Get' }),
    ]);
    return {
      version: status.version,
      dbSizeBytes: Number(status.dbSize),
      dbSizeInUseBytes: Number(status.dbSizeInUse),
      raftIndex: Number(status.raftIndex),
      raftAppliedIndex: Number(status.raftAppliedIndex),
      raftTerm: Number(status.raftTerm),
      revision: Number(status.header.revision),
      leader: status.leader,
      alarms: alarms.alarms.map((a) => String(a.alarm).toUpperCase()),
    };
  });
}

export { dirBytes, processRssBytes } from '../../../shared/process-metrics.ts';

/** Gives the free pages of the db file back; blocks every request to that member while it runs. */
export function defragment(endpoint: string): Promise<void> {
  return withClient(endpoint, async (client) => {
    await client.maintenance.defragment();
  });
}

/** Drops history below revision (physically, before returning). Already compacted there: no-op. */
export function compactTo(endpoint: string, revision: number): Promise<void> {
  if (!Number.isSafeInteger(revision) || revision <= 0) {
    return Promise.reject(new TypeError(`revision must be a positive integer; got ${revision}`));
  }
  return withClient(endpoint, async (client) => {
    try {
      await client.kv.compact({ revision, physical: true });
    } catch (err) {
      if (!isCompactedError(err)) throw err;
    }
  });
}

/**
 * Clears every active alarm. A NOSPACE alarm stays set after compaction and defragmentation and keeps
 * failing every write until it is disarmed. Returns the alarms that were cleared.
 */
export function disarmAlarms(endpoint: string): Promise<string[]> {
  return withClient(endpoint, async (client) => {
    const active = await client.maintenance.alarm({ action: 'Get' });
    for (const a of active.alarms) {
      await client.maintenance.alarm({ action: 'Deactivate', memberID: a.memberID, alarm: a.alarm });
    }
    return active.alarms.map((a) => String(a.alarm).toUpperCase());
  });
}
