/**
 * The in-process controllers kube-apiserver runs next to its storage: CRD registration (serve a CRD's
 * resources as soon as it is written, mark it Established, remove its instances when it is deleted) and
 * namespace deletion (delete everything in a terminating namespace, then the namespace).
 */

import { isDeepStrictEqual } from 'node:util';
import type { NamespaceSpec } from 'kubernetes-types/core/v1.js';
import { CRD_CLEANUP_FINALIZER, crdResources, establishedStatus, terminatingStatus } from '../crd-resources.ts';
import type { ResourceInfo } from '../registry.ts';
import type { ApiContext } from './context.ts';
import { ApiError } from './errors.ts';
import type { ApiObject } from './objects.ts';
import { timestamp } from './objects.ts';
import { schemaModule } from './peers.ts';
import type { ObjectStore } from './store.ts';

const SYSTEM_MANAGER = 'kube-apiserver';
const POLL_MS = 20;
const MAX_POLL_MS = 500;

export class Controllers {
  private readonly ctx: ApiContext;
  private readonly store: ObjectStore;
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(ctx: ApiContext, store: ObjectStore) {
    this.ctx = ctx;
    this.store = store;
    store.deleteFinalizers.set('apiextensions.k8s.io/customresourcedefinitions', CRD_CLEANUP_FINALIZER);
    store.afterCommit.set('apiextensions.k8s.io/customresourcedefinitions', (_info, obj, deleted) =>
      this.onCrd(obj!, deleted),
    );
    store.afterCommit.set('/namespaces', async (_info, obj, deleted): Promise<undefined> => {
      if (!deleted && obj?.metadata?.deletionTimestamp)
        this.spawn(`ns/${obj.metadata.name}`, () => this.cleanupNamespace(obj.metadata.name));
    });
  }

  private crdInfo(): ResourceInfo {
    return this.ctx.registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  }

  private namespaceInfo(): ResourceInfo {
    return this.ctx.registry.get('', 'v1', 'namespaces')!;
  }

  /** Registers the CRDs and resumes the cleanups found in storage (restart on an existing etcd). */
  async start(): Promise<void> {
    const { items } = await this.store.listAll(this.crdInfo());
    for (const crd of items) await this.onCrd(crd, false);
    const namespaces = await this.store.listAll(this.namespaceInfo());
    for (const ns of namespaces.items) {
      if (ns.metadata.deletionTimestamp)
        this.spawn(`ns/${ns.metadata.name}`, () => this.cleanupNamespace(ns.metadata.name));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running.values()]);
  }

  private spawn(key: string, task: () => Promise<void>): void {
    if (this.stopped || this.running.has(key)) return;
    const p = task()
      .catch((err) => {
        if (!this.stopped) console.error(`local kube-api ${this.ctx.name}: ${key}:`, err);
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, p);
  }

  private async onCrd(crd: ApiObject, deleted: boolean): Promise<ApiObject | undefined> {
    const name = crd.metadata.name;
    if (deleted) {
      this.ctx.registry.removeCrd(name);
      return;
    }
    this.ctx.registry.removeCrd(name);
    for (const info of crdResources(crd, (c, v) => schemaModule.crdVersionSchema(c, v))) this.ctx.registry.add(info);
    const now = timestamp(this.ctx.now());
    if (crd.metadata.deletionTimestamp) {
      const status = terminatingStatus(crd, now);
      let latest: ApiObject | undefined;
      if (!isDeepStrictEqual(crd.status, status)) latest = await this.writeCrdStatus(name, status);
      if (crd.metadata.finalizers?.includes(CRD_CLEANUP_FINALIZER))
        this.spawn(`crd/${name}`, () => this.cleanupCrd(name));
      return latest;
    }
    const status = establishedStatus(crd, now);
    if (isDeepStrictEqual(crd.status, status)) return;
    return this.writeCrdStatus(name, status);
  }

  private async writeCrdStatus(name: string, status: Record<string, unknown>): Promise<ApiObject | undefined> {
    try {
      return await this.store.update(
        this.crdInfo(),
        undefined,
        name,
        'status',
        { fieldManager: SYSTEM_MANAGER, fieldValidation: 'Ignore' },
        (c) => ({
          ...c,
          status,
        }),
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Deletes every instance of a terminating CRD, waits for them to go, then drops the finalizer. */
  private async cleanupCrd(name: string): Promise<void> {
    const crd = await this.store.get(this.crdInfo(), undefined, name);
    if (!crd) return;
    const info = this.ctx.registry.all().find((i) => i.crdName === name && i.version === i.storageVersion);
    if (info) await this.deleteAllAndWait(info, undefined);
    if (this.stopped) return;
    await this.store
      .update(
        this.crdInfo(),
        undefined,
        name,
        undefined,
        { fieldManager: SYSTEM_MANAGER, fieldValidation: 'Ignore' },
        (c) => {
          c.metadata.finalizers = (c.metadata.finalizers ?? []).filter((f: string) => f !== CRD_CLEANUP_FINALIZER);
          return c;
        },
      )
      .catch((err) => {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      });
  }

  /** Deletes the contents of a terminating namespace, then clears its `kubernetes` finalizer. */
  private async cleanupNamespace(name: string): Promise<void> {
    const namespaced = this.ctx.registry.storedResources().filter((i) => i.namespaced);
    for (const info of namespaced) {
      await this.deleteAllAndWait(info, name);
      if (this.stopped) return;
    }
    await this.store
      .update(
        this.namespaceInfo(),
        undefined,
        name,
        'finalize',
        { fieldManager: SYSTEM_MANAGER, fieldValidation: 'Ignore' },
        (ns) => {
          const spec = ns.spec as NamespaceSpec | undefined;
          ns.spec = {
            ...(spec ?? {}),
            finalizers: (spec?.finalizers ?? []).filter((f) => f !== 'kubernetes'),
          };
          return ns;
        },
      )
      .catch((err) => {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      });
  }

  /** Deletes every object of a resource (in a namespace) and waits until finalizers let them all go. */
  private async deleteAllAndWait(info: ResourceInfo, namespace: string | undefined): Promise<void> {
    const requested = new Set<string | undefined>(); // uids (every stored object has one)
    let delay = POLL_MS;
    for (;;) {
      if (this.stopped) return;
      const { items } = await this.store.listAll(info, namespace);
      if (!items.length) return;
      for (const obj of items) {
        if (requested.has(obj.metadata.uid)) continue;
        requested.add(obj.metadata.uid);
        await this.store
          .delete(info, obj.metadata.namespace, obj.metadata.name, {
            propagationPolicy: 'Background',
            preconditions: { uid: obj.metadata.uid },
          })
          .catch((err) => {
            if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
          });
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, MAX_POLL_MS);
    }
  }
}
