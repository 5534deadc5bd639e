/**
 * In-memory Storage with etcd's semantics: one global revision counter, modRevision per key, an event
 * history for watch-from-revision and reads at a past revision, and compaction (explicit via compact(),
 * implicit when the history ring overflows). Values are kept as JSON text, as etcd keeps bytes, and each
 * entry also keeps its value as an object (a copy of the one written), which every read
 * hands out with a top level and `metadata` of its own and everything below shared — as the watch path has
 * since former decision 0035 (dev/bench/HISTORY.md). So a caller may change what it gets at the top level
 * and in `metadata` (the API layer stamps apiVersion, kind and resourceVersion there), and nothing deeper: a
 * caller that changes an object in depth copies it first (the API layer's read-modify-write does). A parse
 * per read was the largest own cost of a busy fleet cluster thread (dev/bench/HISTORY.md, former decision
 * 0038). With LOCAL_API_FREEZE_SHARED=1 (the test suite sets it) the shared part is frozen, so a caller that
 * breaks the rule throws instead of changing what every other reader sees.
 */
import {
  CompactedError,
  ConflictError,
  KeyExistsError,
  type ListOptions,
  type ListResult,
  NotFoundError,
  type Storage,
  type StorageWatchEvent,
  type StoredObject,
  type StoredValue,
  WatchEventMemo,
  type WatchHandle,
} from './types.ts';

interface Entry {
  json: string;
  /** The value as an object, shared by every read below its top level and `metadata` (see the header). */
  value: StoredValue;
  modRevision: number;
  /** metadata.labels as written (a copy), so a list's label hint can pass over the entry untouched. */
  labels: Labels | undefined;
}

/** A value a read at an earlier revision rebuilds from history: its text only, parsed when read. */
type PastEntry = Pick<Entry, 'json' | 'modRevision'> & { labels: undefined };

type Labels = Record<string, string>;

function labelsOf(value: StoredValue): Labels | undefined {
  const labels = (value as { metadata?: { labels?: unknown } }).metadata?.labels;
  return labels && typeof labels === 'object' ? { ...(labels as Labels) } : undefined;
}

/** One write as history keeps it: enough to replay it to watchers and to undo it for past reads. */
interface HistoryEvent {
  revision: number;
  key: string;
  type: 'put' | 'delete';
  /** New value (put) — JSON text. */
  json?: string;
  /** Value before the write, absent for a create. */
  prevJson?: string;
  prevModRevision?: number;
  /** metadata.labels of the value before the write (the entry's copy), for label-selected watches. */
  prevLabels?: Labels;
}

interface Watcher {
  prefix: string;
  /** Highest revision delivered (or skipped as before the start point). */
  delivered: number;
  live: boolean;
  stopped: boolean;
  onEvent: (e: StorageWatchEvent, memo?: WatchEventMemo) => void;
  onError: (err: Error) => void;
}

export interface MemoryStorageOptions {
  /** Events kept for watch-from-revision; older revisions are compacted away. Default 10000. */
  historyLimit?: number;
}

/** Sorted array of keys; binary search keeps prefix listing at O(log n + k). */
class SortedKeys {
  readonly keys: string[] = [];
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const k = this.keys[mid]; // mid < keys.length
      if (k !== undefined && k < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  insert(key: string): void {
    const i = this.lowerBound(key);
    if (this.keys[i] !== key) this.keys.splice(i, 0, key);
  }
  remove(key: string): void {
    const i = this.lowerBound(key);
    if (this.keys[i] === key) this.keys.splice(i, 1);
  }
  /** Keys starting with prefix, strictly after `after` when given. */
  *range(prefix: string, after?: string): Generator<string> {
    let i = this.lowerBound(after !== undefined && after >= prefix ? after : prefix);
    if (after !== undefined && this.keys[i] === after) i++;
    for (; i < this.keys.length; i++) {
      const k = this.keys[i];
      if (k === undefined || !k.startsWith(prefix)) return;
      yield k;
    }
  }
}

/** An event's values, parsed at most once while it is dispatched to every watcher. */
interface ParsedOnce {
  value?: StoredValue;
  prevValue?: StoredValue;
  /** Passed with the event to every watcher of a live dispatch (none on a replay, which serves one watcher). */
  memo?: WatchEventMemo;
}

/** A copy of the top level and of `metadata`, sharing everything below with `v`. */
function ownTop(v: StoredValue): StoredValue {
  const metadata = (v as { metadata?: unknown }).metadata;
  return (metadata && typeof metadata === 'object' ? { ...v, metadata: { ...metadata } } : { ...v }) as StoredValue;
}

const FREEZE_SHARED = process.env.LOCAL_API_FREEZE_SHARED === '1';

/**
 * An entry's own copy of a value written, shared by its reads in place of a parse of its JSON text. Under
 * LOCAL_API_FREEZE_SHARED it is frozen, and it must be what that parse would give: plain objects, arrays,
 * strings, booleans, null and finite numbers, no undefined member.
 */
function sharedValue(key: string, v: StoredValue): StoredValue {
  const own = ownTop(v);
  if (FREEZE_SHARED) freezeJsonValue(own, key, '');
  return own;
}

function freezeJsonValue(v: unknown, key: string, path: string): void {
  const refuse = (what: string) => {
    throw new Error(
      `memory storage: ${key}${path || ' (root)'} is ${what}, which its JSON text would not read back as`,
    );
  };
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || Object.is(v, -0)) refuse(String(v));
    return;
  }
  if (typeof v !== 'object') {
    refuse(typeof v);
    return;
  }
  const proto = Object.getPrototypeOf(v);
  if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) refuse('not a plain object');
  if (Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const [k, child] of Object.entries(v))
    freezeJsonValue(child, key, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`);
}

export function createMemoryStorage(opts: MemoryStorageOptions = {}): Storage {
  const historyLimit = Math.max(1, opts.historyLimit ?? 10000);
  const data = new Map<string, Entry>();
  const keys = new SortedKeys();
  // Ring of the most recent events, oldest first; `historyStart` indexes the oldest live slot so that
  // dropping from the front is O(1) amortised (the array is compacted when half of it is dead).
  let history: HistoryEvent[] = [];
  let historyStart = 0;
  let revision = 0;
  /** Like etcd: reads/watches starting below this revision fail with CompactedError. */
  let compactRevision = 0;
  let closed = false;
  const watchers = new Set<Watcher>();
  // Events are dispatched through a queue so a watcher that writes from its callback cannot reorder
  // delivery for the watchers after it.
  const dispatchQueue: Array<{ ev: HistoryEvent; written?: StoredValue }> = [];
  let dispatching = false;

  const historyLength = () => history.length - historyStart;

  function dropOldest(): void {
    const ev = history[historyStart];
    if (!ev) throw new Error('memory storage: no history event to drop');
    historyStart++;
    compactRevision = Math.max(compactRevision, ev.revision + 1);
    if (historyStart > 1024 && historyStart * 2 > history.length) {
      history = history.slice(historyStart);
      historyStart = 0;
    }
  }

  /**
   * `written` is the object a put stored, handed to the live watchers in place of a parse of its JSON text:
   * every write has at least one watcher that reads it (the garbage collector's), and that parse was ~4% of
   * a busy fleet cluster thread (dev/bench/HISTORY.md, former decision 0035). A replay parses the text.
   */
  function record(ev: HistoryEvent, written?: StoredValue): void {
    history.push(ev);
    while (historyLength() > historyLimit) dropOldest();
    dispatchQueue.push({ ev, written });
    if (dispatching) return;
    dispatching = true;
    try {
      while (dispatchQueue.length) {
        const next = dispatchQueue.shift()!;
        const parsed: ParsedOnce = { memo: new WatchEventMemo(), value: next.written };
        for (const w of watchers) if (w.live) deliver(w, next.ev, parsed);
      }
    } finally {
      dispatching = false;
    }
  }

  /**
   * An event's values are parsed when a watcher first reads them, once for every watcher the event is
   * dispatched to (a live put's new value is not parsed at all: it is the object written): a watcher gets its
   * own copy of the top level and of `metadata` (consumers stamp apiVersion, kind and resourceVersion there)
   * and shares everything below with the others and with the writer, so none of them may change anything
   * deeper. The garbage collector's watch reads no previous value of a put, and a watch with
   * no selector none at all. With a forwarder, a kubelet and the garbage collector watching, a Pod event was
   * parsed three times. Likewise the watchers of a live dispatch share one `memo`, so HTTP watches that would
   * send the same line serialize it once (handlers/watch.ts).
   */
  function toWatchEvent(ev: HistoryEvent, parsed: ParsedOnce): StorageWatchEvent {
    if (ev.type === 'put') {
      let value: StoredValue | undefined;
      let prevValue: StoredValue | undefined;
      return {
        type: 'put',
        key: ev.key,
        get value() {
          if (value === undefined) {
            parsed.value ??= JSON.parse(ev.json!) as StoredValue;
            value = ownTop(parsed.value);
          }
          return value;
        },
        modRevision: ev.revision,
        get prevValue() {
          if (ev.prevJson === undefined) return undefined;
          if (prevValue === undefined) {
            parsed.prevValue ??= JSON.parse(ev.prevJson) as StoredValue;
            prevValue = ownTop(parsed.prevValue);
          }
          return prevValue;
        },
        ...(ev.prevJson === undefined ? {} : { prevLabels: { labels: ev.prevLabels } }),
        created: ev.prevJson === undefined,
      };
    }
    parsed.prevValue ??= JSON.parse(ev.prevJson!) as StoredValue;
    return {
      type: 'delete',
      key: ev.key,
      prevValue: ownTop(parsed.prevValue),
      modRevision: ev.revision,
    };
  }

  function deliver(w: Watcher, ev: HistoryEvent, parsed: ParsedOnce = {}): void {
    if (w.stopped || ev.revision <= w.delivered) return;
    w.delivered = ev.revision;
    if (!ev.key.startsWith(w.prefix)) return;
    try {
      w.onEvent(toWatchEvent(ev, parsed), parsed.memo);
    } catch {
      // A failing consumer must not break the writer or other watchers.
    }
  }

  function assertOpen(): void {
    if (closed) throw new Error('memory storage is closed');
  }

  function nextRevision(): number {
    return ++revision;
  }

  function stored(key: string, e: Entry | PastEntry): StoredObject {
    const value = 'value' in e ? ownTop(e.value) : (JSON.parse(e.json) as StoredValue);
    return { key, value, modRevision: e.modRevision };
  }

  /** Index of the first history event with revision > rev (history is revision-ordered). */
  function historyIndexAfter(rev: number): number {
    let lo = historyStart;
    let hi = history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ev = history[mid]; // mid < history.length
      if (ev !== undefined && ev.revision <= rev) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Reads the prefix as it was at `rev` by undoing later events on a copy of the affected keys. */
  function listAtRevision(prefix: string, rev: number, options: ListOptions): ListResult {
    const view = new Map<string, PastEntry | undefined>();
    for (let i = history.length - 1; i >= historyStart; i--) {
      const ev = history[i];
      if (ev === undefined || ev.revision <= rev) break;
      if (!ev.key.startsWith(prefix)) continue;
      // Past values' labels are not kept: a label hint lets them all through (the caller filters them).
      view.set(
        ev.key,
        ev.prevJson === undefined
          ? undefined
          : { json: ev.prevJson, modRevision: ev.prevModRevision!, labels: undefined },
      );
    }
    const candidates = new Set<string>();
    for (const k of keys.range(prefix, options.startAfterKey)) candidates.add(k);
    for (const k of view.keys()) {
      if (options.startAfterKey === undefined || k > options.startAfterKey) candidates.add(k);
    }
    const sorted = [...candidates].sort();
    const items: StoredObject[] = [];
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    let remaining = 0;
    for (const k of sorted) {
      const e = view.has(k) ? view.get(k) : data.get(k);
      if (!e) continue;
      if (options.labelHint && !view.has(k) && !options.labelHint(e.labels)) continue;
      if (items.length >= limit) remaining++;
      else items.push(stored(k, e));
    }
    return { items, revision: rev, more: remaining > 0, ...(remaining > 0 ? { remaining } : {}) };
  }

  const storage: Storage = {
    backend: 'memory',

    async get(key) {
      assertOpen();
      const e = data.get(key);
      return e ? stored(key, e) : undefined;
    },

    async list(prefix, options = {}) {
      assertOpen();
      const at = options.atRevision;
      if (at !== undefined && at > 0 && at < revision) {
        if (at < compactRevision) throw new CompactedError(at, compactRevision);
        return listAtRevision(prefix, at, options);
      }
      const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
      const items: StoredObject[] = [];
      let remaining = 0;
      const hint = options.labelHint;
      for (const k of keys.range(prefix, options.startAfterKey)) {
        const e = data.get(k)!;
        if (hint && !hint(e.labels)) continue;
        if (items.length >= limit) remaining++;
        else items.push(stored(k, e));
      }
      return {
        items,
        revision: at !== undefined && at > revision ? at : revision,
        more: remaining > 0,
        ...(remaining > 0 ? { remaining } : {}),
      };
    },

    async create(key, value) {
      assertOpen();
      if (data.has(key)) throw new KeyExistsError(key);
      const json = JSON.stringify(value);
      const rev = nextRevision();
      const e: Entry = { json, value: sharedValue(key, value), modRevision: rev, labels: labelsOf(value) };
      data.set(key, e);
      keys.insert(key);
      record({ revision: rev, key, type: 'put', json }, value);
      // The caller's object is handed back (and was shared with the live watchers): storage keeps its own
      // JSON text, so reads never see what either does to their copy of the top level or metadata.
      return { key, value, modRevision: rev };
    },

    async update(key, value, expectedModRevision) {
      assertOpen();
      const prev = data.get(key);
      if (!prev) throw new NotFoundError(key);
      if (prev.modRevision !== expectedModRevision) throw new ConflictError(key, prev.modRevision);
      const json = JSON.stringify(value);
      const rev = nextRevision();
      const e: Entry = { json, value: sharedValue(key, value), modRevision: rev, labels: labelsOf(value) };
      data.set(key, e);
      record(
        {
          revision: rev,
          key,
          type: 'put',
          json,
          prevJson: prev.json,
          prevModRevision: prev.modRevision,
          prevLabels: prev.labels,
        },
        value,
      );
      return { key, value, modRevision: rev };
    },

    async delete(key, expectedModRevision) {
      assertOpen();
      const prev = data.get(key);
      if (!prev) throw new NotFoundError(key);
      if (expectedModRevision !== undefined && prev.modRevision !== expectedModRevision) {
        throw new ConflictError(key, prev.modRevision);
      }
      const rev = nextRevision();
      data.delete(key);
      keys.remove(key);
      record({ revision: rev, key, type: 'delete', prevJson: prev.json, prevModRevision: prev.modRevision });
      return { key, value: ownTop(prev.value), modRevision: rev };
    },

    watch(prefix, afterRevision, onEvent, onError): WatchHandle {
      const w: Watcher = { prefix, delivered: afterRevision, live: false, stopped: false, onEvent, onError };
      // Replay asynchronously so the caller holds the handle before the first callback. Any write that
      // happens before the replay lands in history and is replayed from there, so nothing is lost.
      queueMicrotask(() => {
        if (w.stopped) return;
        if (closed) {
          w.stopped = true;
          onError(new Error('memory storage is closed'));
          return;
        }
        if (afterRevision + 1 < compactRevision) {
          w.stopped = true;
          onError(new CompactedError(afterRevision, compactRevision));
          return;
        }
        for (let i = historyIndexAfter(afterRevision); i < history.length && !w.stopped; i++) {
          const ev = history[i];
          if (ev) deliver(w, ev);
        }
        w.live = true;
        watchers.add(w);
      });
      return {
        stop() {
          w.stopped = true;
          watchers.delete(w);
        },
      };
    },

    async currentRevision() {
      assertOpen();
      return revision;
    },

    async compact(rev) {
      assertOpen();
      if (rev > revision) throw new Error(`cannot compact to revision ${rev}: current revision is ${revision}`);
      if (rev <= compactRevision) return;
      compactRevision = rev;
      while (historyLength() > 0) {
        const oldest = history[historyStart];
        if (!oldest || oldest.revision >= rev) break;
        dropOldest();
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const w of watchers) {
        w.stopped = true;
        try {
          w.onError(new Error('memory storage is closed'));
        } catch {
          // ignore consumer failures during shutdown
        }
      }
      watchers.clear();
    },
  };
  return storage;
}
