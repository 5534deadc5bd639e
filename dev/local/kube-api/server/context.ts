import type { AuthGate } from '../auth/gate.ts';
import type { FaultInjector } from '../faults.ts';
import type { ResourceRegistry } from '../registry.ts';
import type { Storage } from '../storage/types.ts';
import type { RequestLog } from './request-log.ts';

/** Everything a request handler needs, one per local cluster (many clusters can share a process). */
export interface ApiContext {
  name: string;
  storage: Storage;
  registry: ResourceRegistry;
  requestLog: RequestLog;
  faults: FaultInjector;
  /** How often a watch with allowWatchBookmarks sends a BOOKMARK. */
  bookmarkIntervalMs: number;
  /** Open watch responses, ended on stop(). */
  openWatches: Set<() => void>;
  /** Wakes background controllers (namespace cleanup, GC) after a write. */
  afterWrite?: () => void;
  now(): Date;
  /** Authentication and authorization; absent in plain-HTTP mode, where every request is allowed. */
  auth?: AuthGate;
}
