import type { FaultInjector } from '../faults.ts';
import type { RequestLog } from './request-log.ts';
import type { StoreContext } from './store.ts';

/**
 * Everything a request handler needs, one per local cluster (many clusters can share a process): the
 * store's part (storage, registry, afterWrite, now; see StoreContext) and the rest.
 */
export interface ApiContext extends StoreContext {
  name: string;
  requestLog: RequestLog;
  faults: FaultInjector;
  /** How often a watch with allowWatchBookmarks sends a BOOKMARK. */
  bookmarkIntervalMs: number;
  /** Open watch responses, ended on stop(). */
  openWatches: Set<() => void>;
}
