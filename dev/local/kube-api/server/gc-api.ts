/**
 * The view of the cluster the garbage collector works on: every object of every resource, a watch over
 * all of them, and the two writes it makes (delete a dependent, edit finalizers/ownerReferences). Writes
 * go through the ObjectStore, so they follow the same rules as API requests (but are not logged as
 * client requests).
 */

import type { ObjectRef } from '../gc.ts';
import type { ResourceInfo } from '../registry.ts';
import { CompactedError, type StorageWatchEvent, type WatchHandle } from '../storage/types.ts';
import type { ApiContext } from './context.ts';
import { ApiError } from './errors.ts';
import { type ApiObject, type OwnerReference, present } from './objects.ts';
import type { ObjectStore, Propagation } from './store.ts';

export type { ObjectRef };

export interface GcApi {
  listAll(): Promise<ApiObject[]>;
  watchAll(onChange: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject) => void): () => void;
  deleteObject(ref: ObjectRef, propagation: Propagation): Promise<void>;
  patchMetadata(ref: ObjectRef, patch: { finalizers?: string[]; ownerReferences?: OwnerReference[] }): Promise<void>;
}

const GC_MANAGER = 'kube-controller-manager';

export function createGcApi(ctx: ApiContext, store: ObjectStore): GcApi {
  let lastListRevision: number | undefined;

  /** Which stored resource a key belongs to (longest matching prefix). */
  const resourceForKey = (key: string): ResourceInfo | undefined => {
    let best: ResourceInfo | undefined;
    for (const info of ctx.registry.storedResources()) {
      if (key.startsWith(`${info.keyPrefix}/`) && (!best || info.keyPrefix.length > best.keyPrefix.length)) best = info;
    }
    return best;
  };

  const resolve = (ref: ObjectRef): ResourceInfo => {
    const info = ctx.registry.byKind(ref.apiVersion, ref.kind);
    if (!info) throw new ApiError(404, 'NotFound', `no resource serves ${ref.apiVersion}, Kind=${ref.kind}`);
    return info;
  };

  const ignoreGone = (err: unknown) => {
    if (
      err instanceof ApiError &&
      (err.code === 404 || (err.code === 409 && err.message.includes('Precondition failed: UID')))
    )
      return;
    throw err;
  };

  return {
    async listAll() {
      const out: ApiObject[] = [];
      let revision = 0;
      for (const info of ctx.registry.storedResources()) {
        const { items, revision: rev } = await store.listAll(info);
        revision = Math.max(revision, rev);
        out.push(...items);
      }
      lastListRevision = revision;
      return out;
    },

    watchAll(onChange) {
      let handle: WatchHandle | undefined;
      let stopped = false;
      const onEvent = (e: StorageWatchEvent) => {
        const info = resourceForKey(e.key);
        if (!info) return;
        if (e.type === 'delete') onChange('DELETED', present(info, e.prevValue as ApiObject, e.modRevision));
        else onChange(e.created ? 'ADDED' : 'MODIFIED', present(info, e.value as ApiObject, e.modRevision));
      };
      const start = async (after: number | undefined) => {
        const from = after ?? (await ctx.storage.currentRevision());
        if (stopped) return;
        handle = ctx.storage.watch('/registry/', from, onEvent, (err) => {
          if (stopped) return;
          // History compacted under us: replay current state as ADDED and watch on from there.
          if (err instanceof CompactedError) {
            void (async () => {
              const rev = await ctx.storage.currentRevision();
              for (const info of ctx.registry.storedResources()) {
                const { items } = await store.listAll(info);
                for (const obj of items) onChange('ADDED', obj);
              }
              await start(rev);
            })().catch(() => undefined);
          }
        });
      };
      void start(lastListRevision).catch(() => undefined);
      return () => {
        stopped = true;
        handle?.stop();
      };
    },

    async deleteObject(ref, propagation) {
      const info = resolve(ref);
      await store
        .delete(info, info.namespaced ? ref.namespace : undefined, ref.name, {
          propagationPolicy: propagation,
          preconditions: { uid: ref.uid },
        })
        .catch(ignoreGone);
    },

    async patchMetadata(ref, patch) {
      const info = resolve(ref);
      await store
        .update(
          info,
          info.namespaced ? ref.namespace : undefined,
          ref.name,
          undefined,
          { fieldManager: GC_MANAGER, fieldValidation: 'Ignore' },
          (obj) => {
            if (obj.metadata.uid !== ref.uid)
              throw new ApiError(404, 'NotFound', `${ref.kind} ${ref.name} was replaced`);
            if (patch.finalizers !== undefined) obj.metadata.finalizers = patch.finalizers;
            if (patch.ownerReferences !== undefined) {
              if (patch.ownerReferences.length) obj.metadata.ownerReferences = patch.ownerReferences;
              else delete obj.metadata.ownerReferences;
            }
            return obj;
          },
        )
        .catch(ignoreGone);
    },
  };
}
