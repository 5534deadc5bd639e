/**
 * Owner-reference garbage collector with kube-controller-manager's semantics:
 * - an object none of whose owners exists any more is deleted (with the propagation its own finalizers
 *   ask for, background otherwise); owners that are gone are dropped from an object that still has a live
 *   owner;
 * - an owner being deleted in the foreground (deletionTimestamp + `foregroundDeletion` finalizer) gets
 *   its dependents deleted first; once no dependent with `blockOwnerDeletion` is left, the finalizer is
 *   removed (the API server then deletes the owner);
 * - an owner being deleted with `orphan` propagation has its ownerReferences removed from its dependents,
 *   then the `orphan` finalizer is removed;
 * - a namespaced dependent can only be owned by an object in its own namespace or a cluster-scoped one;
 *   a reference anywhere else counts as a missing owner, as in kube.
 * The collector keeps a cache fed by the API's watch. An owner is treated as gone only after the watch
 * reported its deletion or a fresh list confirmed it is absent, so a lagging watch never causes a wrong
 * delete.
 */

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
}

import type { ApiObject, OwnerReference } from './api-object.ts';

export type { ApiObject };

export type Propagation = 'Background' | 'Foreground' | 'Orphan';

export interface GcApi {
  listAll(): Promise<ApiObject[]>;
  watchAll(onChange: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject) => void): () => void;
  deleteObject(ref: ObjectRef, propagation: Propagation): Promise<void>;
  /** Replaces the named metadata lists with the given ones. */
  patchMetadata(ref: ObjectRef, patch: { finalizers?: string[]; ownerReferences?: OwnerReference[] }): Promise<void>;
}

export interface GarbageCollector {
  stop(): void;
  /** Resolves once the initial list is done and no work is queued, running or waiting for a retry. */
  idle(): Promise<void>;
}

export interface GarbageCollectorOptions {
  /** Called with errors that will be retried (default: ignored); `ref` is absent for the initial list. */
  onError?: (err: unknown, ref?: ObjectRef) => void;
  /** First retry delay; doubles up to 5 s. */
  retryDelayMs?: number;
}

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/** Remembered deleted uids, enough to cover any burst of cascading deletes. */
const ABSENT_MEMORY = 100_000;

const ownerRefs = (o: ApiObject): OwnerReference[] =>
  Array.isArray(o.metadata?.ownerReferences) ? o.metadata.ownerReferences : [];
const finalizers = (o: ApiObject): string[] => (Array.isArray(o.metadata?.finalizers) ? o.metadata.finalizers : []);
const isDeleting = (o: ApiObject) => !!o.metadata?.deletionTimestamp;
const hasFinalizer = (o: ApiObject, f: string) => finalizers(o).includes(f);
const groupOf = (apiVersion: string | undefined) => (apiVersion?.includes('/') ? apiVersion.split('/')[0] : '');

/** An object's uid: every object the API lists or watches has one (the store sets it on create). */
const uidOf = (o: ApiObject): string => o.metadata.uid as string;

function refOf(o: ApiObject): ObjectRef {
  const ref: ObjectRef = {
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata?.name,
    uid: o.metadata?.uid as string,
  };
  if (o.metadata?.namespace) ref.namespace = o.metadata.namespace;
  return ref;
}

function isNotFound(err: unknown): boolean {
  const e = err as
    | { statusCode?: number; status?: number; code?: number; response?: { statusCode?: number } }
    | undefined;
  return e?.statusCode === 404 || e?.status === 404 || e?.code === 404 || e?.response?.statusCode === 404;
}

function revision(o: ApiObject): number {
  const rv = Number(o.metadata?.resourceVersion);
  return Number.isFinite(rv) ? rv : NaN;
}

export function startGarbageCollector(api: GcApi, options: GarbageCollectorOptions = {}): GarbageCollector {
  const objects = new Map<string, ApiObject>();
  /** owner uid → uids of objects that list it in ownerReferences. */
  const dependents = new Map<string, Set<string>>();
  /** Uids known to be deleted (insertion-ordered, trimmed to ABSENT_MEMORY). */
  const absent = new Set<string>();
  const queue = new Set<string>();
  const retries = new Map<string, number>();
  const retryTimers = new Set<ReturnType<typeof setTimeout>>();
  let idleWaiters: Array<() => void> = [];
  let synced = false;
  let draining = false;
  let stopped = false;
  /**
   * A list confirms "owner not seen" cases; one list serves every case observed before it started (an
   * owner exists before its dependent, so a list begun after the dependent arrived must show the owner).
   */
  let relist: { startSeq: number; seen: Promise<Set<string>> } | undefined;
  /** Observation counter, and when each object's current version was observed. */
  let seq = 0;
  const observedSeq = new Map<string, number>();
  let buffered: Array<['ADDED' | 'MODIFIED' | 'DELETED', ApiObject]> | undefined = [];

  const rememberAbsent = (uid: string) => {
    absent.add(uid);
    if (absent.size > ABSENT_MEMORY) absent.delete(absent.values().next().value as string);
  };

  const link = (o: ApiObject, add: boolean) => {
    const uid = uidOf(o);
    for (const r of ownerRefs(o)) {
      let set = dependents.get(r.uid);
      if (add) {
        if (!set) {
          set = new Set();
          dependents.set(r.uid, set);
        }
        set.add(uid);
      } else if (set) {
        set.delete(uid);
        if (set.size === 0) dependents.delete(r.uid);
      }
    }
  };

  const enqueue = (uid: string) => {
    if (stopped) return;
    queue.add(uid);
    if (synced && !draining) void drain();
  };

  const enqueueDependents = (uid: string) => {
    for (const d of dependents.get(uid) ?? []) enqueue(d);
  };

  const observe = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject) => {
    const uid = obj?.metadata?.uid;
    if (!uid) return;
    const known = objects.get(uid);
    // Per-resource watches may deliver a list result and a watch event out of order; keep the newest.
    if (known && type !== 'DELETED' && revision(obj) <= revision(known)) return; // stale or already seen
    if (type === 'DELETED') {
      observedSeq.delete(uid);
      if (known) {
        link(known, false);
        objects.delete(uid);
        for (const r of ownerRefs(known)) enqueue(r.uid); // a foreground owner may be waiting for this one
      }
      rememberAbsent(uid);
      enqueueDependents(uid);
      return;
    }
    if (absent.has(uid)) return; // stale event for an object already deleted
    if (known) link(known, false);
    objects.set(uid, obj);
    observedSeq.set(uid, ++seq);
    link(obj, true);
    if (known) {
      // Owners that lost this dependent may be waiting on it in the foreground.
      const now = new Set(ownerRefs(obj).map((r) => r.uid));
      for (const r of ownerRefs(known)) if (!now.has(r.uid)) enqueue(r.uid);
    }
    if (isDeleting(obj) && (hasFinalizer(obj, FOREGROUND_FINALIZER) || hasFinalizer(obj, ORPHAN_FINALIZER))) {
      enqueue(uid);
      enqueueDependents(uid);
    } else if (ownerRefs(obj).length > 0) {
      enqueue(uid);
    }
  };

  const onChange = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject) => {
    if (stopped) return;
    if (buffered) buffered.push([type, obj]);
    else observe(type, obj);
  };

  /** The uids that exist according to a list started after `dependentSeq`. */
  const confirmAbsence = (dependentSeq: number): Promise<Set<string>> => {
    if (!relist || relist.startSeq < dependentSeq) {
      const attempt: NonNullable<typeof relist> = {
        startSeq: seq,
        seen: api.listAll().then(
          (items) => {
            const seen = new Set<string>();
            for (const o of items) {
              if (!o?.metadata?.uid) continue;
              seen.add(o.metadata.uid);
              observe('MODIFIED', o);
            }
            return seen;
          },
          (err) => {
            if (relist === attempt) relist = undefined; // let the retry list again
            throw err;
          },
        ),
      };
      relist = attempt;
    }
    return relist.seen;
  };

  type OwnerState = 'solid' | 'dangling' | 'waiting' | 'unknown';

  const ownerState = (dep: ApiObject, r: OwnerReference): OwnerState => {
    const owner = objects.get(r.uid);
    if (!owner) return absent.has(r.uid) ? 'dangling' : 'unknown';
    const ns = owner.metadata?.namespace;
    const sameIdentity =
      owner.metadata?.name === r.name &&
      (!owner.kind || owner.kind === r.kind) &&
      (!owner.apiVersion || groupOf(owner.apiVersion) === groupOf(r.apiVersion));
    // kube looks the owner up in the dependent's namespace (or cluster scope): elsewhere it does not exist.
    const reachable = !ns || ns === dep.metadata?.namespace;
    if (!sameIdentity || !reachable) return 'dangling';
    return isDeleting(owner) && hasFinalizer(owner, FOREGROUND_FINALIZER) ? 'waiting' : 'solid';
  };

  const attemptToDelete = async (obj: ApiObject): Promise<void> => {
    const refs = ownerRefs(obj);
    let states = refs.map((r) => ownerState(obj, r));
    if (states.includes('unknown')) {
      const seen = await confirmAbsence(observedSeq.get(uidOf(obj)) ?? seq);
      for (const [i, r] of refs.entries())
        if (states[i] === 'unknown' && !seen.has(r.uid) && !objects.has(r.uid)) rememberAbsent(r.uid);
      const current = objects.get(uidOf(obj));
      if (!current || revision(current) !== revision(obj)) return void enqueue(uidOf(obj)); // changed meanwhile

      states = refs.map((r) => ownerState(obj, r));
      if (states.includes('unknown')) return; // appeared after all; its events will bring us back
    }
    const solid = states.filter((s) => s === 'solid').length;
    const dropped = new Set(
      refs.filter((_, i) => states[i] === 'dangling' || states[i] === 'waiting').map((r) => r.uid),
    );
    if (solid > 0) {
      if (dropped.size === 0) return;
      await api.patchMetadata(refOf(obj), { ownerReferences: refs.filter((r) => !dropped.has(r.uid)) });
      return;
    }
    const ownDependents = [...(dependents.get(uidOf(obj)) ?? [])]
      .map((uid) => objects.get(uid))
      .filter((d): d is ApiObject => !!d);
    if (states.includes('waiting') && ownDependents.length > 0) {
      // A dependent of ours already waits in the foreground: possibly a cycle (it owns one of our owners).
      // Like kube, stop blocking our owners so neither side waits for the other forever.
      if (
        ownDependents.some((d) => isDeleting(d) && hasFinalizer(d, FOREGROUND_FINALIZER)) &&
        refs.some((r) => r.blockOwnerDeletion)
      ) {
        await api.patchMetadata(refOf(obj), {
          ownerReferences: refs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)),
        });
      }
      // An owner waits for us and we have dependents of our own: they must go first, so foreground.
      await api.deleteObject(refOf(obj), 'Foreground');
      return;
    }
    const policy: Propagation = hasFinalizer(obj, ORPHAN_FINALIZER)
      ? 'Orphan'
      : hasFinalizer(obj, FOREGROUND_FINALIZER)
        ? 'Foreground'
        : 'Background';
    await api.deleteObject(refOf(obj), policy);
  };

  const removeFinalizer = (obj: ApiObject, f: string) =>
    api.patchMetadata(refOf(obj), { finalizers: finalizers(obj).filter((x) => x !== f) });

  const processDeletingDependents = async (owner: ApiObject): Promise<void> => {
    const blocking = [...(dependents.get(uidOf(owner)) ?? [])]
      .map((uid) => objects.get(uid))
      .filter(
        (d): d is ApiObject => !!d && ownerRefs(d).some((r) => r.uid === uidOf(owner) && r.blockOwnerDeletion === true),
      );
    if (blocking.length === 0) await removeFinalizer(owner, FOREGROUND_FINALIZER);
    // Otherwise the dependents' deletions (queued when the owner's state was observed) bring us back here.
  };

  const orphanDependents = async (owner: ApiObject): Promise<void> => {
    for (const uid of [...(dependents.get(uidOf(owner)) ?? [])]) {
      const dep = objects.get(uid);
      if (!dep) continue;
      try {
        await api.patchMetadata(refOf(dep), {
          ownerReferences: ownerRefs(dep).filter((r) => r.uid !== uidOf(owner)),
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    await removeFinalizer(owner, ORPHAN_FINALIZER);
  };

  const process = async (uid: string): Promise<void> => {
    const obj = objects.get(uid);
    if (!obj) return;
    if (isDeleting(obj)) {
      // "Being deleted" is one-way: only the foreground and orphan finalizers are ours to act on.
      if (hasFinalizer(obj, FOREGROUND_FINALIZER)) await processDeletingDependents(obj);
      else if (hasFinalizer(obj, ORPHAN_FINALIZER)) await orphanDependents(obj);
      return;
    }
    if (ownerRefs(obj).length > 0) await attemptToDelete(obj);
  };

  const notifyIfIdle = () => {
    if (synced && queue.size === 0 && !draining && retryTimers.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const drain = async () => {
    draining = true;
    try {
      while (queue.size > 0 && !stopped) {
        const uid = queue.values().next().value as string;
        queue.delete(uid);
        try {
          await process(uid);
          retries.delete(uid);
        } catch (err) {
          if (isNotFound(err)) continue;
          const obj = objects.get(uid);
          if (obj) options.onError?.(err, refOf(obj));
          const attempt = (retries.get(uid) ?? 0) + 1;
          retries.set(uid, attempt);
          const timer = setTimeout(
            () => {
              retryTimers.delete(timer);
              enqueue(uid);
              notifyIfIdle();
            },
            Math.min(5000, (options.retryDelayMs ?? 50) * 2 ** (attempt - 1)),
          );
          retryTimers.add(timer);
        }
      }
    } finally {
      draining = false;
      relist = undefined;
      notifyIfIdle();
    }
  };

  const unwatch = api.watchAll(onChange);
  const initialSync = (attempt: number) => {
    api
      .listAll()
      .then((items) => {
        if (stopped) return;
        for (const o of items) observe('ADDED', o);
        const pending = buffered ?? [];
        buffered = undefined;
        for (const [type, o] of pending) observe(type, o);
        synced = true;
        void drain();
      })
      .catch((err) => {
        if (stopped) return;
        options.onError?.(err);
        const timer = setTimeout(
          () => {
            retryTimers.delete(timer);
            initialSync(attempt + 1);
          },
          Math.min(5000, (options.retryDelayMs ?? 50) * 2 ** attempt),
        );
        retryTimers.add(timer);
      });
  };
  initialSync(0);

  return {
    stop() {
      stopped = true;
      unwatch();
      for (const t of retryTimers) clearTimeout(t);
      retryTimers.clear();
      queue.clear();
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    },
    idle() {
      if (stopped) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        notifyIfIdle();
      });
    },
  };
}
