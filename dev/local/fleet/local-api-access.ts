/**
 * What benchmarks, the soak and tests read of a fleet cluster's local API besides HTTP: its request log,
 * its fault injection and its storage. The same interface whether the cluster runs on the main thread or
 * in a cluster worker thread (then every call is a message to that thread), so callers have one code path.
 */
import type { FaultConfig, LocalCluster, RequestRecord, Storage, WriteFilter } from '../kube-api/index.ts';
import type { ListOptions, ListResult, StoredObject } from '../kube-api/storage/types.ts';

export interface LocalApiAccess {
  requestLog: {
    /** A position in the log; pass it to the others to see only later requests. */
    mark(): Promise<number>;
    since(mark?: number): Promise<RequestRecord[]>;
    /** Write requests since a mark; dry runs excluded (RequestLog.writesSince). */
    writesSince(mark?: number, filter?: WriteFilter): Promise<RequestRecord[]>;
    countWritesSince(mark?: number, filter?: WriteFilter): Promise<number>;
  };
  /** Replaces the fault injection rules (an empty rule list turns faults off). */
  setFaults(cfg: FaultConfig): Promise<void>;
  /** Reads straight from the cluster's storage, past the API (what the soak checks its invariants on). */
  storage: Pick<Storage, 'get' | 'list'>;
}

/** One call on a LocalApiAccess, as a message to the thread the cluster runs in. */
export type LocalApiCall =
  | { op: 'mark' }
  | { op: 'since'; mark?: number }
  | { op: 'writesSince'; mark?: number; filter?: WriteFilter }
  | { op: 'countWritesSince'; mark?: number; filter?: WriteFilter }
  | { op: 'setFaults'; cfg: FaultConfig }
  | { op: 'get'; key: string }
  | { op: 'list'; prefix: string; options?: ListOptions };

export function inProcessApiAccess(cluster: LocalCluster): LocalApiAccess {
  const log = cluster.requestLog;
  return {
    requestLog: {
      mark: async () => log.mark(),
      since: async (mark) => log.since(mark),
      writesSince: async (mark, filter) => log.writesSince(mark, filter),
      countWritesSince: async (mark, filter) => log.countWritesSince(mark, filter),
    },
    setFaults: async (cfg) => cluster.setFaults(cfg),
    storage: {
      get: (key) => cluster.storage.get(key),
      list: (prefix, options) => cluster.storage.list(prefix, options),
    },
  };
}

/** Runs a call that arrived as a message against the cluster's own access (in the thread it runs in). */
export function runApiCall(access: LocalApiAccess, call: LocalApiCall): Promise<unknown> {
  switch (call.op) {
    case 'mark':
      return access.requestLog.mark();
    case 'since':
      return access.requestLog.since(call.mark);
    case 'writesSince':
      return access.requestLog.writesSince(call.mark, call.filter);
    case 'countWritesSince':
      return access.requestLog.countWritesSince(call.mark, call.filter);
    case 'setFaults':
      return access.setFaults(call.cfg);
    case 'get':
      return access.storage.get(call.key);
    case 'list':
      return access.storage.list(call.prefix, call.options);
  }
}

/** The access of a cluster in another thread: each call is sent there and answered with the result. */
export function remoteApiAccess(send: (call: LocalApiCall) => Promise<unknown>): LocalApiAccess {
  return {
    requestLog: {
      mark: async () => (await send({ op: 'mark' })) as number,
      since: async (mark) => (await send({ op: 'since', mark })) as RequestRecord[],
      writesSince: async (mark, filter) => (await send({ op: 'writesSince', mark, filter })) as RequestRecord[],
      countWritesSince: async (mark, filter) => (await send({ op: 'countWritesSince', mark, filter })) as number,
    },
    setFaults: async (cfg) => void (await send({ op: 'setFaults', cfg })),
    storage: {
      get: async (key) => (await send({ op: 'get', key })) as StoredObject | undefined,
      list: async (prefix, options) => (await send({ op: 'list', prefix, options })) as ListResult,
    },
  };
}
