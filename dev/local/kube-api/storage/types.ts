/**
 * Storage contract of the local Kubernetes API. Two implementations: in memory (default) and a real etcd
 * with kube-apiserver's key layout (`/registry/...`). The resourceVersion of an object is the revision at
 * which it was last written (etcd's mod_revision); the API layer stamps it into metadata on the way out,
 * it is never stored inside the value.
 */
export type StoredValue = Record<string, unknown>;

export interface StoredObject {
  key: string;
  value: StoredValue;
  /** Revision of the last write of this key (etcd mod_revision). */
  modRevision: number;
}

export interface ListOptions {
  /** Max items to return; 0/undefined = all. */
  limit?: number;
  /** Return keys strictly greater than this key (pagination continue point). */
  startAfterKey?: string;
  /** Read the prefix at this revision (consistent pagination); 410-style CompactedError if compacted. */
  atRevision?: number;
  /**
   * A hint, not a filter: a backend that knows an entry's labels without decoding it may leave out entries
   * this rejects (they count neither toward `limit` nor `remaining`). Whatever comes back, the caller still
   * applies its whole selector. The memory backend keeps each entry's labels; etcd ignores the hint.
   */
  labelHint?: (labels: Record<string, string> | undefined) => boolean;
}

export interface ListResult {
  items: StoredObject[];
  /** Revision the list was read at. */
  revision: number;
  /** True when more keys exist after the last returned item. */
  more: boolean;
  /** How many keys exist after the last returned item; present when `more` is. */
  remaining?: number;
}

/**
 * Results computed from one storage event, shared by every watcher that event is dispatched to, so that work
 * which depends only on the event and on what the key names (e.g. a watch line serialized for a resource
 * version and output form) is done once per event rather than once per watcher. An entry is found by an
 * owner object (compared by identity, e.g. the ResourceInfo a watch serves) and a string key: together they
 * must name everything the value depends on besides the event itself. A backend makes a new memo for every
 * event, so an entry can never be read for another event.
 */
export class WatchEventMemo {
  private readonly byOwner = new Map<object, Map<string, string>>();

  /** The text `compute` makes for (owner, key): computed by the first watcher that asks, reused by the rest. */
  text(owner: object, key: string, compute: () => string): string {
    let texts = this.byOwner.get(owner);
    if (!texts) {
      texts = new Map();
      this.byOwner.set(owner, texts);
    }
    let text = texts.get(key);
    if (text === undefined) {
      text = compute();
      texts.set(key, text);
    }
    return text;
  }
}

export type StorageWatchEvent =
  | {
      type: 'put';
      key: string;
      value: StoredValue;
      modRevision: number;
      prevValue?: StoredValue;
      /**
       * metadata.labels of the previous value, when the backend has them without decoding it (the memory
       * backend keeps every entry's labels): a watch whose selector is only a label selector decides whether
       * the object was selected before from these, and leaves prevValue unread.
       */
      prevLabels?: { labels: Record<string, string> | undefined };
      created: boolean;
    }
  | { type: 'delete'; key: string; prevValue: StoredValue; modRevision: number };

export interface WatchHandle {
  stop(): void;
}

export interface Storage {
  readonly backend: 'memory' | 'etcd';
  get(key: string): Promise<StoredObject | undefined>;
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  /**
   * Fails with KeyExistsError when the key exists. The memory backend hands `value` itself to its live
   * watchers (each with its own copy of the top level and of metadata): after the call, the writer may stamp
   * those (resourceVersion, apiVersion) but must not change anything below them. `value` is JSON data (what
   * JSON.parse could return): the watchers see it as it is, not as its stored text decodes.
   */
  create(key: string, value: StoredValue): Promise<StoredObject>;
  /** Compare-and-swap on modRevision; ConflictError when it moved, NotFoundError when gone. As create for `value`. */
  update(key: string, value: StoredValue, expectedModRevision: number): Promise<StoredObject>;
  /** Deletes; with expectedModRevision it is a CAS. Returns the deleted object with the delete's revision. */
  delete(key: string, expectedModRevision?: number): Promise<StoredObject>;
  /**
   * Streams every change under prefix with revision > afterRevision, in revision order, then live changes.
   * onError receives CompactedError when afterRevision is older than the oldest revision kept, and any
   * backend failure; the watch is dead after onError. `memo`, when given, is the same object for every
   * watcher of that one event (the memory backend passes it while dispatching a live event to all its
   * watchers at once); a backend that builds each watcher's events apart (etcd: one stream per watch) passes
   * none, and consumers then compute for themselves.
   */
  watch(
    prefix: string,
    afterRevision: number,
    onEvent: (e: StorageWatchEvent, memo?: WatchEventMemo) => void,
    onError: (err: Error) => void,
  ): WatchHandle;
  currentRevision(): Promise<number>;
  /** Drops history at and below revision; watches/lists older than it get CompactedError. */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}

export class KeyExistsError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`key exists: ${key}`);
    this.key = key;
    this.name = 'KeyExistsError';
  }
}
export class NotFoundError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`key not found: ${key}`);
    this.key = key;
    this.name = 'NotFoundError';
  }
}
export class ConflictError extends Error {
  readonly key: string;
  readonly actualModRevision: number;
  constructor(key: string, actualModRevision: number) {
    super(`revision conflict on ${key}`);
    this.key = key;
    this.actualModRevision = actualModRevision;
    this.name = 'ConflictError';
  }
}
export class CompactedError extends Error {
  readonly requested: number;
  readonly compactRevision: number;
  constructor(requested: number, compactRevision: number) {
    super(`required revision ${requested} has been compacted (oldest kept ${compactRevision})`);
    this.requested = requested;
    this.compactRevision = compactRevision;
    this.name = 'CompactedError';
  }
}
