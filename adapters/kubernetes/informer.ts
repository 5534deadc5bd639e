import { ApiException, HttpMethod, type KubeConfig, Watch } from '@kubernetes/client-node';
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import { RawObjectApi } from './raw-object-api.ts';

/**
 * An object as a list or a watch delivers it, before anything checked it: any kind, every field may be
 * missing. The informer reads only metadata; a resource's summarize reads its own kind's fields.
 */
export interface WatchedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** A list page as the apiserver sends it (a PartialObjectMetadataList for metadata-only resources). */
interface ListPage<O> {
  items?: O[];
  metadata?: { continue?: string; resourceVersion?: string };
}

/** What a watch's ERROR event carries: a Status. */
interface WatchStatus {
  code?: number;
  message?: string;
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What to list and watch, and what to remember of each object (a summary, or the object itself). */
export interface InformerResource<S, O extends WatchedObject = WatchedObject> {
  apiVersion: string;
  kind: string;
  namespace?: string;
  /** Collection path for watch, e.g. /api/v1/nodes. */
  path: string;
  /**
   * Where the path depends on what the cluster serves (the NodePool version): found again before every
   * list, so a relist after the served versions changed uses the new one. `path` is used until it resolves.
   */
  resolvePath?(objects: RawObjectApi): Promise<string>;
  labelSelector?: string;
  /**
   * List and watch as PartialObjectMetadata: the apiserver sends metadata only (names, labels, owner
   * references, managedFields), never the body. For kinds whose content must not reach this process
   * (Secrets) and whose changes metadata alone reveals.
   */
  metadataOnly?: boolean;
  /**
   * A (re)list reports a newly found object only when isRelevant(undefined, summary) says so, as a watch
   * does. Without it every object a list finds is reported, which suits kinds with no other resync.
   */
  listedByRelevance?: boolean;
  summarize(obj: O): S;
  /**
   * False for changes nobody acts on (e.g. Node heartbeats); the cache is still updated. `before` is
   * undefined for an object created while watching (a relist reports every new object regardless).
   */
  isRelevant(before: S | undefined, after: S | undefined): boolean;
}

export interface InformerHandlers<S> {
  /** Awaited: a slow consumer (backpressure) slows the watch instead of buffering without bound. */
  onChange(type: ChangeType, key: string, summary: S, before: S | undefined): Promise<void>;
  /** After every (re)list: every key now known, so the consumer can resync. */
  onRelist?(known: Map<string, S>): Promise<void>;
}

export interface InformerStats {
  lists: number;
  watchesStarted: number;
  gone410: number;
  watchErrors: number;
  events: number;
  /** BOOKMARK events: the watch's resourceVersion moved on with no change to report. */
  bookmarks: number;
  lastResourceVersion: string;
  lastError?: string;
}

export class GoneError extends Error {}

const PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const PARTIAL_OBJECT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/** The same cluster and credentials, asking for metadata only (client-node's Watch takes no headers). */
function metadataOnlyConfig(kc: KubeConfig): KubeConfig {
  const config = Object.create(kc) as KubeConfig;
  config.applyToFetchOptions = async (opts) => {
    const init = await kc.applyToFetchOptions(opts);
    const headers = new Headers(init.headers as Record<string, string> | Headers | undefined);
    headers.set('Accept', PARTIAL_OBJECT);
    return { ...init, headers: Object.fromEntries(headers.entries()) };
  };
  return config;
}

const rvOf = (s: { resourceVersion?: string; metadata?: { resourceVersion?: string } }) =>
  s.resourceVersion ?? s.metadata?.resourceVersion;
export const keyOf = (o: WatchedObject) =>
  o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : String(o.metadata?.name);

/**
 * List+watch of one resource with the outer loop the JS client lacks: resumes from the last
 * resourceVersion after a dropped watch, relists on 410 Gone, and diffs the relist against what it knew
 * so deletions missed while disconnected still become DELETED changes.
 */
export class Informer<
  S extends { resourceVersion?: string; metadata?: { resourceVersion?: string } } = WatchedObject,
  O extends WatchedObject = WatchedObject,
> {
  private readonly known = new Map<string, S>();
  private readonly kc: KubeConfig;
  private readonly resource: InformerResource<S, O>;
  private readonly handlers: InformerHandlers<S>;
  private readonly watchTimeoutSeconds: number;
  private abort: AbortController | undefined;
  private objects: RawObjectApi | undefined;
  private path: string;
  private stopped = false;
  private backoff: IBackoff<unknown> | undefined;
  private readonly backoffFactory = new ExponentialBackoff({ initialDelay: 100, maxDelay: 10_000 });
  private synced!: () => void;
  /** Resolves after the first successful list has been handed to the consumer. */
  readonly hasSynced = new Promise<void>((resolve) => (this.synced = resolve));
  readonly stats: InformerStats = {
    lists: 0,
    watchesStarted: 0,
    gone410: 0,
    watchErrors: 0,
    events: 0,
    bookmarks: 0,
    lastResourceVersion: '',
  };

  constructor(
    kc: KubeConfig,
    resource: InformerResource<S, O>,
    handlers: InformerHandlers<S>,
    opts: { watchTimeoutSeconds?: number } = {},
  ) {
    this.kc = kc;
    this.resource = resource;
    this.handlers = handlers;
    this.watchTimeoutSeconds = opts.watchTimeoutSeconds ?? 300;
    this.path = resource.path;
  }

  async run(): Promise<void> {
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        await this.watchOnce();
        this.backoff = undefined;
      } catch (err) {
        if (this.stopped) break;
        if (err instanceof GoneError) {
          this.stats.gone410 += 1;
          needList = true;
          continue;
        }
        this.stats.watchErrors += 1;
        this.stats.lastError = (err as Error).message;
        // A collection that is no longer served at its path (its version removed) is found anew by a relist.
        if (this.resource.resolvePath && isNotFound(err)) needList = true;
        const backoff = this.backoff ? this.backoff.next(undefined) : this.backoffFactory.next();
        this.backoff = backoff;
        await new Promise((r) => setTimeout(r, backoff.duration));
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  private async relist(): Promise<void> {
    if (this.resource.resolvePath) {
      this.objects ??= RawObjectApi.fromKubeConfig(this.kc);
      this.path = await this.resource.resolvePath(this.objects);
    }
    const items: O[] = [];
    let cont: string | undefined;
    let listRv = '';
    do {
      const page = await this.listPage(cont);
      items.push(...(page.items ?? []));
      cont = page.metadata?.continue || undefined;
      listRv = page.metadata?.resourceVersion ?? listRv;
    } while (cont);
    this.stats.lists += 1;
    const fresh = new Map<string, S>();
    for (const item of items) fresh.set(keyOf(item), this.resource.summarize(item));
    for (const [key, before] of this.known) {
      if (!fresh.has(key)) {
        this.known.delete(key);
        await this.handlers.onChange('DELETED', key, before, before);
      }
    }
    for (const [key, summary] of fresh) {
      const before = this.known.get(key);
      this.known.set(key, summary);
      if (!before) {
        if (!this.resource.listedByRelevance || this.resource.isRelevant(undefined, summary))
          await this.handlers.onChange('ADDED', key, summary, undefined);
      } else if (rvOf(before) !== rvOf(summary) && this.resource.isRelevant(before, summary)) {
        await this.handlers.onChange('MODIFIED', key, summary, before);
      }
    }
    this.stats.lastResourceVersion = listRv;
    await this.handlers.onRelist?.(new Map(this.known));
    this.synced();
  }

  private watchOnce(): Promise<void> {
    this.stats.watchesStarted += 1;
    return new Promise<void>((resolve, reject) => {
      // Events are handled one at a time, in order; the chain also carries consumer backpressure.
      let chain = Promise.resolve();
      let failed: Error | undefined;
      // client-node hands the decoded JSON of each event over untyped: an ERROR event carries a Status.
      const onEvent = (type: string, obj: O & WatchStatus) => {
        chain = chain.then(async () => {
          if (failed) return;
          if (type === 'ERROR') {
            failed =
              obj?.code === 410
                ? new GoneError(obj?.message ?? 'gone')
                : new Error(`watch error: ${obj?.message ?? 'unknown'}`);
            this.abort?.abort();
            return;
          }
          const rv = obj?.metadata?.resourceVersion;
          if (rv) this.stats.lastResourceVersion = rv;
          if (type === 'BOOKMARK') {
            this.stats.bookmarks += 1;
            return;
          }
          this.stats.events += 1;
          await this.apply(type as ChangeType, obj);
        });
      };
      const onDone = (err: unknown) => {
        void chain.then(() => {
          if (failed) reject(failed);
          else if (isGone(err)) reject(new GoneError('gone'));
          else if (err && !(err instanceof Error && err.name === 'AbortError') && !this.stopped)
            reject(err instanceof Error ? err : new Error(String(err)));
          else resolve();
        });
      };
      new Watch(this.resource.metadataOnly ? metadataOnlyConfig(this.kc) : this.kc)
        .watch(
          this.path,
          {
            resourceVersion: this.stats.lastResourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.watchTimeoutSeconds,
            labelSelector: this.resource.labelSelector,
          },
          onEvent,
          onDone,
        )
        .then((controller) => {
          this.abort = controller;
          if (this.stopped) controller.abort();
        }, reject);
    });
  }

  /** The current cache: key (`ns/name` or `name`) → summary. */
  snapshot(): Map<string, S> {
    return new Map(this.known);
  }

  get(key: string): S | undefined {
    return this.known.get(key);
  }

  /**
   * The cached summaries themselves, not a copy: for a scan that finishes before it awaits anything (a
   * controller's sync reading all pods), where snapshot() copied the whole cache on every call.
   */
  values(): MapIterator<S> {
    return this.known.values();
  }

  private async apply(type: ChangeType, obj: O): Promise<void> {
    const key = keyOf(obj);
    const before = this.known.get(key);
    const summary = this.resource.summarize(obj);
    if (type === 'DELETED') {
      this.known.delete(key);
      await this.handlers.onChange('DELETED', key, summary, before);
      return;
    }
    this.known.set(key, summary);
    if (!this.resource.isRelevant(before, summary)) return;
    await this.handlers.onChange(before ? 'MODIFIED' : 'ADDED', key, summary, before);
  }

  private async listPage(cont: string | undefined): Promise<ListPage<O>> {
    const r = this.resource;
    try {
      this.objects ??= RawObjectApi.fromKubeConfig(this.kc);
      // The watch's collection path lists too: the same objects, metadata only when the resource says so.
      const query: Record<string, string> = { limit: '500' };
      if (r.labelSelector) query.labelSelector = r.labelSelector;
      if (cont) query.continue = cont;
      const accept = r.metadataOnly ? PARTIAL_LIST : 'application/json';
      return await this.objects.requestJson<ListPage<O>>(HttpMethod.GET, this.path, { accept, query });
    } catch (err) {
      if (err instanceof ApiException && err.code === 410) throw new GoneError('list continue token expired');
      throw err;
    }
  }
}

function isNotFound(err: unknown): boolean {
  if (err instanceof ApiException) return err.code === 404;
  return typeof err === 'object' && err !== null && 'statusCode' in err && err.statusCode === 404;
}

/** A watch that ended with 410 Gone: its resourceVersion is too old, only a relist can go on. */
function isGone(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'statusCode' in err && err.statusCode === 410;
}
