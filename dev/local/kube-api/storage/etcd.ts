/**
 * Storage on a real etcd, the way kube-apiserver uses it: one key per object under /registry/..., JSON
 * values, resourceVersion = mod_revision, optimistic concurrency by transactions on mod_revision, and watch
 * on etcd's own watch so a compaction surfaces as CompactedError (410 Gone at the API).
 */

import type { Etcd3, IDuplexStream, IKeyValue, IWatchRequest, IWatchResponse } from 'etcd3';
import { createEtcdClient, isCompactedError } from '../../etcd/client.ts';
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
  type WatchHandle,
} from './types.ts';

export interface EtcdStorageOptions {
  /** Client URLs, e.g. `['http://127.0.0.1:2379']`. */
  endpoints: string[];
}

/** How long to wait for etcd to tell the compacted revision after a read hit a compacted revision. */
const COMPACT_PROBE_TIMEOUT_MS = 2000;
const ZERO_KEY = Buffer.from([0]);

type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;

export async function createEtcdStorage(opts: EtcdStorageOptions): Promise<Storage> {
  const client = createEtcdClient(opts?.endpoints, 'createEtcdStorage: endpoints');
  // Fail fast (and clearly) when nothing answers, instead of on the first request much later.
  try {
    await client.kv.range({ key: Buffer.from('\0'), keys_only: true, limit: 1 });
  } catch (err) {
    client.close();
    throw new Error(`etcd at ${opts.endpoints.join(',')} is not reachable: ${(err as Error).message}`, { cause: err });
  }

  const watches = new Set<ActiveWatch>();
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error('etcd storage is closed');
  };

  async function range(key: string | Buffer, rangeEnd: Buffer | undefined, limit: number, revision: number) {
    try {
      return await client.kv.range({ key: Buffer.from(key), range_end: rangeEnd, limit, revision });
    } catch (err) {
      if (revision > 0 && isCompactedError(err))
        throw new CompactedError(revision, await probeCompactRevision(client, revision));
      throw err;
    }
  }

  /** Reads a key after a failed transaction, to tell a conflict from a missing key. */
  async function failedWrite(key: string): Promise<never> {
    const res = await range(key, undefined, 1, 0);
    const kv = res.kvs[0];
    if (!kv) throw new NotFoundError(key);
    throw new ConflictError(key, Number(kv.mod_revision));
  }

  const storage: Storage = {
    backend: 'etcd',

    async get(key) {
      assertOpen();
      requireKey('get', key);
      const res = await range(key, undefined, 1, 0);
      const kv = res.kvs[0];
      return kv ? toStored(kv) : undefined;
    },

    async list(prefix, options: ListOptions = {}): Promise<ListResult> {
      assertOpen();
      requireKey('list', prefix, 'prefix');
      const limit = optionalInteger('list', 'limit', options.limit, 0) ?? 0;
      const atRevision = optionalInteger('list', 'atRevision', options.atRevision, 1);
      if (options.startAfterKey !== undefined && typeof options.startAfterKey !== 'string') {
        throw new TypeError(`list: startAfterKey must be a string; got ${typeof options.startAfterKey}`);
      }
      const whole = prefixRange(prefix);
      let start = whole.start;
      if (options.startAfterKey !== undefined) {
        // The smallest key strictly greater than startAfterKey is startAfterKey + "\0".
        const after = Buffer.concat([Buffer.from(options.startAfterKey), Buffer.from([0])]);
        if (Buffer.compare(after, start) > 0) start = after;
      }
      if (whole.end.length > 0 && Buffer.compare(start, whole.end) >= 0) {
        // Nothing can match, but a compacted atRevision must still fail: read a key no one writes.
        const res = await range(ZERO_KEY, undefined, 1, atRevision ?? 0);
        return { items: [], revision: atRevision ?? Number(res.header.revision), more: false };
      }
      const res = await range(start, whole.end.length > 0 ? whole.end : ZERO_KEY, limit, atRevision ?? 0);
      return {
        items: res.kvs.map(toStored),
        // The header carries the current revision even for a past read; the list is as of atRevision.
        revision: atRevision ?? Number(res.header.revision),
        more: res.more,
        // etcd counts every key in the range, not only the returned ones.
        ...(res.more ? { remaining: Number(res.count) - res.kvs.length } : {}),
      };
    },

    async create(key, value) {
      assertOpen();
      requireKey('create', key);
      const bytes = encode('create', value);
      const res = await client.kv.txn({
        compare: [{ key: Buffer.from(key), target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: Buffer.from(key), value: bytes } }],
      });
      if (!res.succeeded) throw new KeyExistsError(key);
      return { key, value: decode(bytes), modRevision: Number(res.header.revision) };
    },

    async update(key, value, expectedModRevision) {
      assertOpen();
      requireKey('update', key);
      const expected = requireInteger('update', 'expectedModRevision', expectedModRevision, 0);
      const bytes = encode('update', value);
      const res = await client.kv.txn({
        compare: [
          // version > 0 as well, so an expected revision of 0 cannot create a missing key.
          { key: Buffer.from(key), target: 'Version', result: 'Greater', version: 0 },
          { key: Buffer.from(key), target: 'Mod', result: 'Equal', mod_revision: expected },
        ],
        success: [{ request_put: { key: Buffer.from(key), value: bytes } }],
      });
      if (!res.succeeded) return failedWrite(key);
      return { key, value: decode(bytes), modRevision: Number(res.header.revision) };
    },

    async delete(key, expectedModRevision) {
      assertOpen();
      requireKey('delete', key);
      const expected = optionalInteger('delete', 'expectedModRevision', expectedModRevision, 0);
      const compare: Parameters<typeof client.kv.txn>[0]['compare'] = [
        { key: Buffer.from(key), target: 'Version', result: 'Greater', version: 0 },
      ];
      if (expected !== undefined)
        compare.push({ key: Buffer.from(key), target: 'Mod', result: 'Equal', mod_revision: expected });
      const res = await client.kv.txn({
        compare,
        success: [{ request_delete_range: { key: Buffer.from(key), prev_kv: true } }],
      });
      const prev = res.succeeded ? res.responses[0]?.response_delete_range?.prev_kvs?.[0] : undefined;
      if (!prev) return failedWrite(key); // gone, or (with a CAS) moved on
      return { key, value: decode(prev.value), modRevision: Number(res.header.revision) };
    },

    watch(prefix, afterRevision, onEvent, onError): WatchHandle {
      requireKey('watch', prefix, 'prefix');
      requireInteger('watch', 'afterRevision', afterRevision, 0);
      if (closed) {
        queueMicrotask(() => onError(new Error('etcd storage is closed')));
        return { stop() {} };
      }
      const w: ActiveWatch = startWatch(client, prefix, afterRevision, onEvent, onError, () => watches.delete(w));
      watches.add(w);
      return { stop: w.stop };
    },

    async currentRevision() {
      assertOpen();
      const res = await client.kv.range({ key: Buffer.from('\0'), keys_only: true, limit: 1 });
      return Number(res.header.revision);
    },

    async compact(revision) {
      assertOpen();
      const rev = requireInteger('compact', 'revision', revision, 1);
      try {
        // physical: return only once the old revisions are gone, so callers can measure the effect.
        await client.kv.compact({ revision: rev, physical: true });
      } catch (err) {
        // Compacting to a revision that is already compacted is a no-op, as for several kube-apiservers
        // sharing one etcd.
        if (!isCompactedError(err)) throw err;
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      // Like the memory backend: open watches hear about it, so the API layer ends their HTTP watches.
      for (const w of [...watches]) w.fail(new Error('etcd storage is closed'));
      client.close();
    },
  };
  return storage;
}

/**
 * One gRPC watch stream per call: etcd3's shared WatchManager would hide the compact_revision of a
 * compacted watch and silently re-subscribe after a broken stream, while the API layer needs to end the
 * HTTP watch instead so its client relists and rewatches (kube-apiserver's behaviour).
 */
interface ActiveWatch extends WatchHandle {
  /** Ends the watch and reports err to its onError (once). */
  fail(err: Error): void;
}

function startWatch(
  client: Etcd3,
  prefix: string,
  afterRevision: number,
  onEvent: (e: StorageWatchEvent) => void,
  onError: (err: Error) => void,
  onDone: () => void,
): ActiveWatch {
  let stream: WatchStream | undefined;
  let done = false;

  const close = () => {
    if (stream) endStream(stream);
    onDone();
  };
  const fail = (err: Error) => {
    if (done) return;
    done = true;
    close();
    onError(err);
  };
  const handle = (res: IWatchResponse) => {
    if (done) return;
    if (res.compact_revision && res.compact_revision !== '0') {
      fail(new CompactedError(afterRevision, Number(res.compact_revision)));
      return;
    }
    if (res.canceled) {
      fail(new Error(`etcd canceled the watch on ${prefix}${res.cancel_reason ? `: ${res.cancel_reason}` : ''}`));
      return;
    }
    for (const ev of res.events ?? []) {
      if (done) return;
      const event = toWatchEvent(ev.type, ev.kv, ev.prev_kv);
      if (event instanceof Error) {
        fail(event);
        return;
      }
      try {
        onEvent(event);
      } catch {
        // As in the memory backend: a failing consumer must not break delivery to itself or others.
      }
    }
  };

  const range = prefixRange(prefix);
  client.watchClient
    .watch()
    .then((s) => {
      stream = s;
      if (done) {
        endStream(s);
        return;
      }
      s.on('data', handle);
      s.on('error', (err) => fail(new Error(`etcd watch stream on ${prefix} broke: ${err.message}`, { cause: err })));
      s.on('end', () => fail(new Error(`etcd ended the watch stream on ${prefix}`)));
      s.write({
        create_request: {
          key: range.start,
          range_end: range.end.length > 0 ? range.end : ZERO_KEY,
          start_revision: afterRevision + 1,
          prev_kv: true,
        },
      });
    })
    .catch((err: Error) => fail(new Error(`etcd watch on ${prefix} could not start: ${err.message}`, { cause: err })));

  return {
    stop() {
      if (done) return;
      done = true;
      close();
    },
    fail,
  };
}

/**
 * Half-closes before cancelling: etcd3 treats an error on a still-writable stream as a failed host and
 * resets every gRPC channel to it, which would break all other watches and requests.
 */
function endStream(s: WatchStream): void {
  s.on('error', () => {}); // the CANCELLED status that follows is expected
  s.end();
  s.cancel();
}

function toWatchEvent(type: string, kv: IKeyValue, prevKv: IKeyValue | undefined): StorageWatchEvent | Error {
  const key = kv.key.toString();
  const modRevision = Number(kv.mod_revision);
  if (type === 'Delete') {
    // kube-apiserver fails the watch the same way: a DELETED event must carry the last state.
    if (!prevKv) return new Error(`etcd delete event for ${key} at revision ${modRevision} has no previous value`);
    return { type: 'delete', key, prevValue: decode(prevKv.value), modRevision };
  }
  return {
    type: 'put',
    key,
    value: decode(kv.value),
    modRevision,
    prevValue: prevKv ? decode(prevKv.value) : undefined,
    created: kv.create_revision === kv.mod_revision,
  };
}

/**
 * etcd's range error for a compacted revision does not say which revision is the oldest kept; a watch from
 * revision 1 does (etcd answers it at once with compact_revision), so ask that way.
 */
async function probeCompactRevision(client: Etcd3, requested: number): Promise<number> {
  let stream: WatchStream | undefined;
  try {
    stream = await client.watchClient.watch();
    const s = stream;
    return await new Promise<number>((resolve) => {
      const timer = setTimeout(() => resolve(requested + 1), COMPACT_PROBE_TIMEOUT_MS);
      const settle = (rev: number) => {
        clearTimeout(timer);
        resolve(rev);
      };
      s.on('data', (res) => {
        if (res.compact_revision && res.compact_revision !== '0') settle(Number(res.compact_revision));
      });
      s.on('error', () => settle(requested + 1));
      s.write({ create_request: { key: Buffer.from('\0compaction-probe'), start_revision: 1 } });
    });
  } catch {
    return requested + 1; // best effort: the revision asked for is gone, so the oldest kept is above it
  } finally {
    if (stream) endStream(stream);
  }
}

/**
 * [start, end) of every key with this prefix, as bytes; an empty end means "no upper bound" (etcd spells
 * that range_end = "\0").
 */
function prefixRange(prefix: string): { start: Buffer; end: Buffer } {
  const start = Buffer.from(prefix);
  for (let i = start.length - 1; i >= 0; i--) {
    const byte = start.readUInt8(i);
    if (byte < 0xff) {
      const end = Buffer.from(start.subarray(0, i + 1));
      end.writeUInt8(byte + 1, i);
      return { start: start.length > 0 ? start : ZERO_KEY, end };
    }
  }
  return { start: start.length > 0 ? start : ZERO_KEY, end: Buffer.alloc(0) };
}

function toStored(kv: IKeyValue): StoredObject {
  return { key: kv.key.toString(), value: decode(kv.value), modRevision: Number(kv.mod_revision) };
}

function encode(op: string, value: StoredValue): Buffer {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${op}: value must be a JSON object; got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return Buffer.from(JSON.stringify(value));
}

function decode(bytes: Buffer): StoredValue {
  return JSON.parse(bytes.toString()) as StoredValue;
}

function requireKey(op: string, key: unknown, field = 'key'): void {
  if (typeof key !== 'string') throw new TypeError(`${op}: ${field} must be a string; got ${typeof key}`);
  if (field === 'key' && key === '') throw new TypeError(`${op}: key must not be empty`);
}

function requireInteger(op: string, field: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`${op}: ${field} must be an integer >= ${min}; got ${JSON.stringify(value)}`);
  }
  return value;
}

function optionalInteger(op: string, field: string, value: unknown, min: number): number | undefined {
  return value === undefined ? undefined : requireInteger(op, field, value, min);
}
