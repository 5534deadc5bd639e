/**
 * List and watch of one resource inside the API server's own thread, for the local stand-ins that run beside
 * it (the sim kubelet): the objects the storage's watch hands out, without serializing them to a watch line,
 * sending it over loopback and parsing it back. The product's watches (the forwarder) stay HTTP watches.
 *
 * Why: in the 20 × 50 fleet a pool-spirit Pod or Deployment line is ~15 KB, and the sim kubelet received
 * some seven of them a pool on its HTTP watches, ~40% of every byte the cluster threads' watches carried
 * (docs/decisions/0036-stand-ins-read-in-process.md).
 *
 * The objects are shared: each event's top level and `metadata` are this cache's own (storage copies them
 * per watcher), everything below is shared with the writer and the other watchers, so a consumer must not
 * change an object it is handed; it copies what it writes back (`{ ...pod, status }`).
 */
import { CompactedError, type StorageWatchEvent, type WatchHandle } from '../storage/types.ts';
import type { ApiContext } from './context.ts';
import { type ApiObject, present } from './objects.ts';
import { parseRoute } from './routes.ts';
import type { ObjectStore } from './store.ts';

export type CacheChange = 'ADDED' | 'MODIFIED' | 'DELETED';

/** The part of an informer a controller reads: what adapters/kubernetes/informer.ts's Informer offers too. */
export interface ObjectCache<T> {
  run(): Promise<void>;
  stop(): void;
  /** Resolves once the first list has been handed to onChange. */
  readonly hasSynced: Promise<void>;
  get(key: string): T | undefined;
  /** The cached objects themselves: for a scan that ends before it awaits anything. */
  values(): MapIterator<T>;
  snapshot(): Map<string, T>;
}

export type ObjectCacheFactory = (
  path: string,
  onChange: (type: CacheChange, obj: ApiObject) => void,
) => ObjectCache<ApiObject>;

const RETRY_MS = 1_000;

const keyOf = (o: ApiObject): string =>
  o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : String(o.metadata?.name);

/**
 * `path` is a collection path across namespaces, as an HTTP informer would watch: `/api/v1/pods`,
 * `/apis/apps/v1/deployments`.
 */
export function createObjectCacheFactory(ctx: ApiContext, store: ObjectStore): ObjectCacheFactory {
  return (path, onChange) => {
    // Read as the server reads a request's URL: a list across namespaces is what the stand-ins watch.
    const route = parseRoute('GET', path, new URLSearchParams());
    const info =
      route.type === 'resource' && route.verb === 'list' && route.namespace === undefined
        ? ctx.registry.get(route.group, route.version, route.resource)
        : undefined;
    if (!info) throw new Error(`object cache: ${JSON.stringify(path)} is not a collection this API serves`);
    const prefix = `${info.keyPrefix}/`;
    const known = new Map<string, ApiObject>();
    let handle: WatchHandle | undefined;
    let stopped = false;
    let synced!: () => void;
    const hasSynced = new Promise<void>((resolve) => (synced = resolve));
    // Storage delivers events synchronously, inside the write that caused them: they are handed on after
    // it, in order, so a consumer never runs inside another request's write.
    const pending: Array<[CacheChange, ApiObject]> = [];
    let flushing = false;
    const hand = (type: CacheChange, obj: ApiObject) => {
      pending.push([type, obj]);
      if (flushing) return;
      flushing = true;
      queueMicrotask(() => {
        flushing = false;
        for (const [t, o] of pending.splice(0)) if (!stopped) onChange(t, o);
      });
    };

    const onEvent = (e: StorageWatchEvent) => {
      if (stopped) return;
      if (e.type === 'delete') {
        const obj = present(info, e.prevValue as ApiObject, e.modRevision);
        known.delete(keyOf(obj));
        return hand('DELETED', obj);
      }
      const obj = present(info, e.value as ApiObject, e.modRevision);
      const key = keyOf(obj);
      const type = known.has(key) ? 'MODIFIED' : 'ADDED';
      known.set(key, obj);
      hand(type, obj);
    };

    /** Lists, tells what changed since the cache last knew (all ADDED the first time), and watches on. */
    const listAndWatch = async () => {
      const { items, revision } = await store.listAll(info);
      if (stopped) return;
      const fresh = new Map(items.map((o) => [keyOf(o), o]));
      for (const [key, before] of known) {
        if (fresh.has(key)) continue;
        known.delete(key);
        hand('DELETED', before);
      }
      for (const [key, obj] of fresh) {
        const before = known.get(key);
        known.set(key, obj);
        if (before?.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
          hand(before ? 'MODIFIED' : 'ADDED', obj);
      }
      handle = ctx.storage.watch(prefix, revision, onEvent, (err) => {
        // The watch is dead. History compacted past it (it fell behind): list again at once, as an informer
        // relists on 410; a backend failure (etcd unreachable): list again shortly, until it answers.
        if (!stopped) again(err instanceof CompactedError ? 0 : RETRY_MS);
      });
      queueMicrotask(synced);
    };
    const again = (delayMs: number) => {
      const t = setTimeout(() => void listAndWatch().catch(() => !stopped && again(RETRY_MS)), delayMs);
      t.unref();
    };

    return {
      run: async () => {
        try {
          await listAndWatch();
        } catch {
          if (!stopped) again(RETRY_MS);
        }
      },
      stop: () => {
        stopped = true;
        handle?.stop();
      },
      hasSynced,
      get: (key) => known.get(key),
      values: () => known.values(),
      snapshot: () => new Map(known),
    };
  };
}
