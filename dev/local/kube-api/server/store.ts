/**
 * Kubernetes object semantics on top of Storage: system metadata (uid, timestamps, generation,
 * resourceVersion), the status subresource split, optimistic concurrency with kube's retry rules,
 * finalizers and deletionTimestamp, namespace existence, managedFields on every write. The HTTP handlers,
 * the namespace/CRD controllers and the garbage collector all write through here.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { NamespaceSpec, NamespaceStatus, ServiceSpec } from 'kubernetes-types/core/v1.js';
import { isCoreResource, type ResourceInfo, type ResourceRegistry } from '../registry.ts';
import { ConflictError, KeyExistsError, NotFoundError, type Storage, type StoredObject } from '../storage/types.ts';
import { applyBuiltinDefaults, ClusterIpAllocator } from './defaults.ts';
import { alreadyExists, badRequest, cause, conflict, forbidden, invalid, notFound, staleConflict } from './errors.ts';
import {
  type ApiObject,
  generationChanged,
  meta,
  present,
  randomSuffix,
  sameContent,
  timestamp,
  toStored,
} from './objects.ts';
import { type FieldValidation, patchModule, schemaModule } from './peers.ts';
import { validateName, validateObject } from './validate.ts';

/** What the store reads of its cluster's ApiContext (context.ts, which extends this). */
export interface StoreContext {
  storage: Storage;
  registry: ResourceRegistry;
  /** Wakes background controllers (namespace cleanup, GC) after a write. */
  afterWrite?: () => void;
  now(): Date;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager: string;
  fieldValidation?: FieldValidation;
  /** Collected `Warning` header texts. */
  warnings?: string[];
  /** Set when managedFields were already computed (server-side apply). */
  managedFieldsDone?: boolean;
  /** The API verb, for error wording (strict decoding errors differ between bodies and patches). */
  verb?: 'create' | 'update' | 'patch';
}

export type Propagation = 'Background' | 'Foreground' | 'Orphan';

/** Computes the desired object from a private copy of the current one (which it may change and return). */
export type Mutator = (current: ApiObject) => ApiObject | Promise<ApiObject>;

/**
 * A PUT's object, which replaces the current one whatever it is: it never sees the current object, so none
 * is copied for it (a copy per write is a JSON round trip of the whole object, e.g. a Pod on every status
 * PUT of the simulated kubelet). The update fills system fields into the object it writes, so a retry after
 * a storage conflict starts again from `again()`, the object as the request sent it (kube's
 * DefaultUpdatedObjectInfo hands each attempt its own copy).
 */
export interface Replacement {
  replacement: ApiObject;
  again(): ApiObject;
}

export interface DeleteOptions {
  dryRun?: boolean;
  propagationPolicy?: Propagation;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  /** The object as deleted, or as it stands with deletionTimestamp while finalizers remain. */
  obj: ApiObject;
  /** True when the object is gone from storage. */
  deleted: boolean;
}

const MAX_ATTEMPTS = 20;
const NAMESPACE_FINALIZER = 'kubernetes';

/** Objects here came from JSON and go back to JSON: a JSON round trip copies them in ~0.6 of structuredClone's time. */
function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Defaulting kube applies before validation (only CRDs need it here). */
function withKindDefaults(info: ResourceInfo, obj: ApiObject): ApiObject {
  if (!info.custom && info.group === 'apiextensions.k8s.io' && info.resource === 'customresourcedefinitions')
    return schemaModule.withCrdDefaults(obj);
  return obj;
}

/** Fields a write through this endpoint never changes (kube's GetResetFields): status on the main resource. */
export function resetFields(info: ResourceInfo, subresource: string | undefined): string[][] | undefined {
  if (subresource === 'status') return undefined;
  return info.subresources.status ? [['status']] : undefined;
}

export function objectKeyFor(info: ResourceInfo, namespace: string | undefined, name: string): string {
  return info.namespaced ? `${info.keyPrefix}/${namespace}/${name}` : `${info.keyPrefix}/${name}`;
}

export class ObjectStore {
  private readonly ctx: StoreContext;
  /** Hooks run after a committed (non-dry-run) write of a resource, e.g. CRD registration. */
  readonly afterCommit = new Map<
    string,
    (info: ResourceInfo, obj: ApiObject | undefined, deleted: boolean) => Promise<ApiObject | undefined>
  >();

  private readonly activeNamespaces = new Set<string>();
  private ipAllocator: ClusterIpAllocator | undefined;
  /** Finalizers the server itself adds when an object of a resource is deleted (e.g. CRD cleanup). */
  readonly deleteFinalizers = new Map<string, string>();

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  private get storage() {
    return this.ctx.storage;
  }

  async get(info: ResourceInfo, namespace: string | undefined, name: string): Promise<ApiObject | undefined> {
    const stored = await this.storage.get(objectKeyFor(info, namespace, name));
    return stored ? present(info, stored.value as ApiObject, stored.modRevision) : undefined;
  }

  async mustGet(info: ResourceInfo, namespace: string | undefined, name: string): Promise<ApiObject> {
    const obj = await this.get(info, namespace, name);
    if (!obj) throw notFound(info, name);
    return obj;
  }

  /** The Service IP allocator, primed with the addresses of the Services already stored. */
  private async clusterIps(): Promise<ClusterIpAllocator> {
    if (!this.ipAllocator) {
      const allocator = new ClusterIpAllocator();
      const services = this.ctx.registry.get('', 'v1', 'services')!;
      for (const svc of (await this.listAll(services)).items) {
        const spec = svc.spec as ServiceSpec | undefined;
        for (const ip of spec?.clusterIPs ?? [spec?.clusterIP]) allocator.reserve(ip);
      }
      this.ipAllocator ??= allocator;
    }
    return this.ipAllocator;
  }

  private isNamespace(info: ResourceInfo): boolean {
    return isCoreResource(info, 'namespaces');
  }

  /** The server's clock as kube writes timestamps (RFC 3339, seconds). */
  now(): string {
    return timestamp(this.ctx.now());
  }

  private namespaceInfo(): ResourceInfo {
    return this.ctx.registry.get('', 'v1', 'namespaces')!;
  }

  /** Namespace must exist and not be terminating for a create in it. */
  private async checkNamespaceForCreate(info: ResourceInfo, namespace: string, name: string): Promise<void> {
    // Active namespaces are remembered until this store writes that namespace again; saves a storage
    // read (an etcd round trip) per create.
    if (this.activeNamespaces.has(namespace)) return;
    const ns = await this.get(this.namespaceInfo(), undefined, namespace);
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, namespace);
    if (ns.metadata?.deletionTimestamp || (ns.status as NamespaceStatus | undefined)?.phase === 'Terminating') {
      throw forbidden(
        info,
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
        [cause('NamespaceTerminating', 'metadata.namespace', `namespace ${namespace} is being terminated`)],
      );
    }
    this.activeNamespaces.add(namespace);
  }

  private commitHook(
    info: ResourceInfo,
    obj: ApiObject | undefined,
    deleted: boolean,
  ): Promise<ApiObject | undefined> | undefined {
    if (this.isNamespace(info) && obj?.metadata?.name) this.activeNamespaces.delete(obj.metadata.name);
    const hook = this.afterCommit.get(`${info.group}/${info.resource}`);
    return hook?.(info, obj, deleted);
  }

  /** POST: fills system metadata, validates and stores a new object. */
  /** `input` is taken over (mutated); pass a copy if the caller still needs it. */
  async create(
    info: ResourceInfo,
    namespace: string | undefined,
    input: ApiObject,
    opts: WriteOptions,
  ): Promise<ApiObject> {
    const obj = input;
    const m = meta(obj);
    if (info.namespaced) {
      if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      m.namespace = namespace;
    } else {
      delete m.namespace;
    }
    if (m.resourceVersion !== undefined && m.resourceVersion !== '') {
      throw badRequest('resourceVersion should not be set on objects to be created');
    }
    const nameCauses = validateName(info, m);
    if (nameCauses.length) throw invalid(info, String(m.name ?? m.generateName ?? ''), nameCauses);
    if (!m.name) m.name = `${m.generateName}${randomSuffix()}`;
    if (info.namespaced) await this.checkNamespaceForCreate(info, namespace!, m.name);
    if (isCoreResource(info, 'services')) await this.clusterIps();

    m.uid = randomUUID();
    m.creationTimestamp = this.now();
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.selfLink;
    if (info.tracksGeneration) m.generation = 1;
    else delete m.generation;
    this.prepareCreateForKind(info, obj);

    const validated = validateObject(
      info,
      withKindDefaults(info, obj),
      opts.fieldValidation ?? 'Warn',
      opts.verb ?? 'create',
    );
    opts.warnings?.push(...validated.warnings);
    let toCreate = validated.obj;
    if (!opts.managedFieldsDone) {
      meta(toCreate).managedFields = patchModule.updateManagedFields({
        before: undefined,
        after: toCreate,
        manager: opts.fieldManager,
        schema: info.schema(),
        now: this.now(),
      });
      if (!meta(toCreate).managedFields?.length) delete meta(toCreate).managedFields;
    }
    toCreate = toStored(info, toCreate);
    if (opts.dryRun) return present(info, toCreate, 0);
    let stored: StoredObject;
    try {
      stored = await this.storage.create(objectKeyFor(info, namespace, m.name), toCreate);
    } catch (err) {
      if (err instanceof KeyExistsError) throw alreadyExists(info, m.name);
      throw err;
    }
    this.ctx.afterWrite?.();
    const created = present(info, stored.value as ApiObject, stored.modRevision);
    const hooked = await this.commitHook(info, created, false);
    return hooked ? present(info, hooked, Number(hooked.metadata.resourceVersion)) : created;
  }

  /** Kind-specific defaults on create, as kube's strategies' PrepareForCreate do. */
  private prepareCreateForKind(info: ResourceInfo, obj: ApiObject): void {
    // kube's node strategy keeps status on create (kubelets register their Node with its conditions);
    // the other kinds with a status subresource start from an empty status.
    const keepsStatus = isCoreResource(info, 'nodes');
    if (info.subresources.status && !keepsStatus) delete obj.status;
    applyBuiltinDefaults(info, obj, undefined, this.ipAllocator);
    if (isCoreResource(info, 'namespaces')) {
      obj.spec = { ...(obj.spec ?? {}), finalizers: [NAMESPACE_FINALIZER] };
      obj.status = { phase: 'Active' };
      const metadata = meta(obj);
      metadata.labels ??= {};
      const labels = metadata.labels;
      labels['kubernetes.io/metadata.name'] = meta(obj).name;
    }
  }

  /**
   * Read-modify-write with kube's GuaranteedUpdate rules: `mutate` gets the current object (as served) and
   * returns the desired one — or, for a PUT, a Replacement is the desired object; a resourceVersion in the
   * result must match the current one (409 otherwise); a storage conflict without such a precondition
   * retries on the fresh object.
   */
  async update(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    subresource: string | undefined,
    opts: WriteOptions,
    mutate: Mutator | Replacement,
  ): Promise<ApiObject> {
    const key = objectKeyFor(info, namespace, name);
    if (isCoreResource(info, 'services')) await this.clusterIps();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const stored = await this.storage.get(key);
      if (!stored) throw notFound(info, name);
      const current = present(info, stored.value as ApiObject, stored.modRevision);
      // `current` must stay as read: admission, the no-op check and managedFields compare against it. A
      // mutator gets its own copy; a replacement has no way to reach `current`, so it needs none.
      const desired =
        typeof mutate === 'function'
          ? await mutate(clone(current))
          : attempt === 0
            ? mutate.replacement
            : mutate.again();
      const m = meta(desired);
      if (
        m.resourceVersion !== undefined &&
        m.resourceVersion !== '' &&
        m.resourceVersion !== current.metadata.resourceVersion
      ) {
        throw staleConflict(info, name);
      }
      if (m.name !== undefined && m.name !== name) {
        throw badRequest(`the name of the object (${m.name}) does not match the name on the URL (${name})`);
      }
      if (info.namespaced && m.namespace !== undefined && m.namespace !== '' && m.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const next = this.prepareUpdate(info, current, desired, subresource, opts);
      if (sameContent(next, current, opts.managedFieldsDone)) return current;
      if (!opts.managedFieldsDone) {
        const managed = patchModule.updateManagedFields({
          before: current,
          after: next,
          manager: opts.fieldManager,
          schema: info.schema(),
          subresource,
          resetFields: resetFields(info, subresource),
          now: this.now(),
        });
        if (managed.length) meta(next).managedFields = managed;
        else delete meta(next).managedFields;
      }
      const toWrite = toStored(info, next);
      const removeNow =
        Boolean(current.metadata.deletionTimestamp) &&
        !toWrite.metadata.finalizers?.length &&
        !(this.isNamespace(info) && (toWrite.spec as NamespaceSpec | undefined)?.finalizers?.length);
      if (opts.dryRun) return present(info, toWrite, stored.modRevision);
      try {
        const written = await this.storage.update(key, toWrite, stored.modRevision);
        this.ctx.afterWrite?.();
        let result = present(info, written.value as ApiObject, written.modRevision);
        if (removeNow) {
          // The last finalizer is gone from an object being deleted: finish the deletion.
          try {
            const gone = await this.storage.delete(key, written.modRevision);
            result = present(info, gone.value as ApiObject, gone.modRevision);
            await this.commitHook(info, result, true);
            return result;
          } catch (err) {
            if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
          }
        }
        const hooked = await this.commitHook(info, result, false);
        return hooked ? present(info, hooked, Number(hooked.metadata.resourceVersion)) : result;
      } catch (err) {
        if (err instanceof NotFoundError) throw notFound(info, name);
        if (err instanceof ConflictError) continue;
        throw err;
      }
    }
    throw conflict(info, name, 'too many concurrent writes, please try again');
  }

  /**
   * Read-modify-write straight on storage, as a REST storage that calls etcd's GuaranteedUpdate itself does
   * (pods/binding): no write strategy, validation or managedFields; `preconditions` on uid and
   * resourceVersion fail as kube's storage precondition does. `mutate` changes the object in place, or
   * returns why it refuses (a 409 on `refusedAs`). A storage conflict retries on the fresh object.
   */
  async guaranteedUpdate(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    preconditions: { uid?: string; resourceVersion?: string },
    refusedAs: { group: string; resource: string },
    mutate: (current: ApiObject) => string | undefined,
  ): Promise<ApiObject> {
    const key = objectKeyFor(info, namespace, name);
    const failed = (what: string, wanted: string, found: unknown) =>
      conflict(
        info,
        name,
        `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${what} in precondition: ${wanted}, ${what} in object meta: ${String(found ?? '')}`,
      );
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const stored = await this.storage.get(key);
      if (!stored) throw notFound(info, name);
      // Storage shares what lies below the top level and metadata with every reader; `mutate` changes depth.
      const current = clone(present(info, stored.value as ApiObject, stored.modRevision));
      if (preconditions.uid && preconditions.uid !== current.metadata.uid)
        throw failed('UID', preconditions.uid, current.metadata.uid);
      if (preconditions.resourceVersion && preconditions.resourceVersion !== current.metadata.resourceVersion)
        throw failed('ResourceVersion', preconditions.resourceVersion, current.metadata.resourceVersion);
      const refused = mutate(current);
      if (refused !== undefined) throw conflict(refusedAs, name, refused);
      try {
        const written = await this.storage.update(key, toStored(info, current), stored.modRevision);
        this.ctx.afterWrite?.();
        return present(info, written.value as ApiObject, written.modRevision);
      } catch (err) {
        if (err instanceof NotFoundError) throw notFound(info, name);
        if (err instanceof ConflictError) continue;
        throw err;
      }
    }
    throw conflict(info, name, 'too many concurrent writes, please try again');
  }

  /** Carries system metadata over, keeps the status subresource apart, bumps generation, validates. */
  private prepareUpdate(
    info: ResourceInfo,
    old: ApiObject,
    desired: ApiObject,
    subresource: string | undefined,
    opts: WriteOptions,
  ): ApiObject {
    let next: ApiObject;
    if (subresource === 'status') {
      // Only status moves through /status (plus the managedFields that track it). The top level and
      // metadata are all that is set below, so only they are copied: the rest is shared with `old`.
      next = { ...old, metadata: { ...old.metadata } };
      if (desired.status === undefined) delete next.status;
      else next.status = desired.status;
      if (desired.metadata?.managedFields !== undefined) next.metadata.managedFields = desired.metadata.managedFields;
    } else {
      next = desired;
      if (info.subresources.status) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
      applyBuiltinDefaults(info, next, old, this.ipAllocator);
    }
    const m = meta(next);
    const om = old.metadata;
    if (m.uid !== undefined && m.uid !== '' && m.uid !== om.uid) {
      throw invalid(info, om.name, [
        cause('FieldValueInvalid', 'metadata.uid', `Invalid value: ${JSON.stringify(m.uid)}: field is immutable`),
      ]);
    }
    m.name = om.name;
    if (info.namespaced) m.namespace = om.namespace;
    m.uid = om.uid;
    m.creationTimestamp = om.creationTimestamp;
    if (om.deletionTimestamp) {
      m.deletionTimestamp = om.deletionTimestamp;
      if (om.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds;
      const added = (m.finalizers ?? []).filter((f: string) => !(om.finalizers ?? []).includes(f));
      if (added.length) {
        throw invalid(info, om.name, [
          cause(
            'FieldValueForbidden',
            'metadata.finalizers',
            `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f: string) => JSON.stringify(f)).join(', ')}}`,
          ),
        ]);
      }
    } else {
      delete m.deletionTimestamp;
      delete m.deletionGracePeriodSeconds;
    }
    if (m.managedFields === undefined && om.managedFields !== undefined) m.managedFields = om.managedFields;
    if (info.tracksGeneration) {
      m.generation = (om.generation ?? 1) + (generationChanged(info, old, next) ? 1 : 0);
    } else if (om.generation !== undefined) {
      m.generation = om.generation;
    } else {
      delete m.generation;
    }
    if (m.finalizers !== undefined && Array.isArray(m.finalizers) && m.finalizers.length === 0) delete m.finalizers;
    if (isCoreResource(info, 'namespaces')) {
      // Namespace spec.finalizers only change through /finalize; the label mirrors the name.
      if (subresource !== 'finalize') next.spec = clone(old.spec);
      // A new labels object: on /status, `next` shares everything below metadata with `old`.
      m.labels = { ...m.labels, 'kubernetes.io/metadata.name': om.name };
    }
    m.resourceVersion = old.metadata.resourceVersion;
    const validated = validateObject(
      info,
      withKindDefaults(info, next),
      opts.fieldValidation ?? 'Warn',
      opts.verb ?? 'update',
    );
    opts.warnings?.push(...validated.warnings);
    return validated.obj;
  }

  /**
   * DELETE: preconditions, then either removes the object or — when finalizers (existing, or the ones a
   * Foreground/Orphan propagation adds) remain — sets deletionTimestamp and leaves it to them.
   */
  async delete(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions,
  ): Promise<DeleteResult> {
    const key = objectKeyFor(info, namespace, name);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const stored = await this.storage.get(key);
      if (!stored) throw notFound(info, name);
      const current = present(info, stored.value as ApiObject, stored.modRevision);
      const m = current.metadata;
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== m.uid) {
        throw conflict(
          info,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${m.uid}`,
        );
      }
      if (pre?.resourceVersion && pre.resourceVersion !== m.resourceVersion) {
        throw conflict(
          info,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion}`,
        );
      }
      const finalizers: string[] = [...(m.finalizers ?? [])];
      const policy = opts.propagationPolicy;
      if (!m.deletionTimestamp) {
        if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion'))
          finalizers.push('foregroundDeletion');
        if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
        const system = this.deleteFinalizers.get(`${info.group}/${info.resource}`);
        if (system && !finalizers.includes(system)) finalizers.push(system);
      }
      const isNamespace = isCoreResource(info, 'namespaces');
      const pendingSpecFinalizers =
        isNamespace && ((current.spec as NamespaceSpec | undefined)?.finalizers ?? []).length > 0;
      if (finalizers.length === 0 && !pendingSpecFinalizers) {
        if (opts.dryRun) return { obj: current, deleted: true };
        try {
          const gone = await this.storage.delete(key, stored.modRevision);
          this.ctx.afterWrite?.();
          const obj = present(info, gone.value as ApiObject, gone.modRevision);
          await this.commitHook(info, obj, true);
          return { obj, deleted: true };
        } catch (err) {
          if (err instanceof ConflictError) continue;
          if (err instanceof NotFoundError) throw notFound(info, name);
          throw err;
        }
      }
      if (m.deletionTimestamp && isDeepStrictEqual(finalizers, m.finalizers ?? []))
        return { obj: current, deleted: false };
      const next = clone(current);
      const nm = next.metadata;
      if (!nm.deletionTimestamp) {
        nm.deletionTimestamp = this.now();
        nm.deletionGracePeriodSeconds = 0;
        if (nm.generation !== undefined) nm.generation += 1;
      }
      if (finalizers.length) nm.finalizers = finalizers;
      if (isNamespace) next.status = { ...(next.status ?? {}), phase: 'Terminating' };
      if (opts.dryRun) return { obj: next, deleted: false };
      delete nm.resourceVersion;
      try {
        const written = await this.storage.update(key, toStored(info, next), stored.modRevision);
        this.ctx.afterWrite?.();
        const obj = present(info, written.value as ApiObject, written.modRevision);
        await this.commitHook(info, obj, false);
        return { obj, deleted: false };
      } catch (err) {
        if (err instanceof ConflictError) continue;
        if (err instanceof NotFoundError) throw notFound(info, name);
        throw err;
      }
    }
    throw conflict(info, name, 'too many concurrent writes, please try again');
  }

  /** Lists every stored object of a resource (optionally one namespace), served at info.version. */
  async listAll(info: ResourceInfo, namespace?: string): Promise<{ items: ApiObject[]; revision: number }> {
    const prefix = info.namespaced && namespace ? `${info.keyPrefix}/${namespace}/` : `${info.keyPrefix}/`;
    const res = await this.storage.list(prefix);
    return { items: res.items.map((s) => present(info, s.value as ApiObject, s.modRevision)), revision: res.revision };
  }
}
