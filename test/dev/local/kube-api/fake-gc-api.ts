/**
 * An in-memory stand-in for the API server as the garbage collector sees it: deletes honour
 * finalizers and propagation like kube-apiserver (Foreground/Orphan add their finalizer and set
 * deletionTimestamp; an object with a deletionTimestamp and no finalizers left is removed), and watch
 * events arrive asynchronously, as over HTTP.
 */
import type { ObjectMeta, OwnerReference } from '../../../../dev/local/kube-api/api-object.ts';
import type { ApiObject, GcApi, ObjectRef, Propagation } from '../../../../dev/local/kube-api/gc.ts';

export class FakeGcApi implements GcApi {
  readonly objects = new Map<string, ApiObject>();
  readonly deleted: string[] = [];
  readonly calls: string[] = [];
  listCalls = 0;
  private rv = 0;
  private listeners = new Set<(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject) => void>();

  /** Creates an object; with `silent` the watch never hears of it (a lagging watch). */
  create(obj: ApiObject, silent = false): ApiObject {
    const stored = structuredClone(obj);
    stored.metadata.resourceVersion = String(++this.rv);
    this.objects.set(stored.metadata.uid!, stored);
    if (!silent) this.emit('ADDED', stored);
    return stored;
  }

  names(): string[] {
    return [...this.objects.values()].map((o) => o.metadata.name).sort();
  }

  get(name: string): ApiObject | undefined {
    return [...this.objects.values()].find((o) => o.metadata.name === name);
  }

  /** A user's delete (what kubectl delete does). */
  async userDelete(name: string, propagation: Propagation = 'Background'): Promise<void> {
    const o = this.get(name);
    if (!o) throw new Error(`no ${name}`);
    await this.deleteObject(
      { apiVersion: o.apiVersion, kind: o.kind, name, uid: o.metadata.uid!, namespace: o.metadata.namespace },
      propagation,
    );
  }

  async listAll(): Promise<ApiObject[]> {
    this.listCalls++;
    return [...this.objects.values()].map((o) => structuredClone(o));
  }

  watchAll(onChange: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject) => void): () => void {
    this.listeners.add(onChange);
    return () => this.listeners.delete(onChange);
  }

  async deleteObject(ref: ObjectRef, propagation: Propagation): Promise<void> {
    this.calls.push(`delete ${ref.name} ${propagation}`);
    const o = this.objects.get(ref.uid);
    if (!o) throw Object.assign(new Error('not found'), { statusCode: 404 });
    const fin: string[] = o.metadata.finalizers ?? [];
    const add = propagation === 'Foreground' ? 'foregroundDeletion' : propagation === 'Orphan' ? 'orphan' : undefined;
    if (add && !fin.includes(add)) o.metadata.finalizers = [...fin, add];
    if ((o.metadata.finalizers ?? []).length === 0) return this.remove(o);
    o.metadata.deletionTimestamp ??= new Date().toISOString();
    this.modified(o);
  }

  async patchMetadata(
    ref: ObjectRef,
    patch: { finalizers?: string[]; ownerReferences?: OwnerReference[] },
  ): Promise<void> {
    this.calls.push(`patch ${ref.name} ${JSON.stringify(patch)}`);
    const o = this.objects.get(ref.uid);
    if (!o) throw Object.assign(new Error('not found'), { statusCode: 404 });
    if (patch.finalizers) o.metadata.finalizers = patch.finalizers;
    if (patch.ownerReferences) o.metadata.ownerReferences = patch.ownerReferences;
    if (o.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).length === 0) return this.remove(o);
    this.modified(o);
  }

  private remove(o: ApiObject) {
    this.objects.delete(o.metadata.uid!);
    this.deleted.push(o.metadata.name);
    o.metadata.resourceVersion = String(++this.rv);
    this.emit('DELETED', o);
  }

  private modified(o: ApiObject) {
    o.metadata.resourceVersion = String(++this.rv);
    this.emit('MODIFIED', o);
  }

  private emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', o: ApiObject) {
    const copy = structuredClone(o);
    setImmediate(() => {
      for (const l of this.listeners) l(type, copy);
    });
  }
}

let uidCounter = 0;
export function obj(
  kind: string,
  name: string,
  opts: {
    namespace?: string;
    owners?: Array<ApiObject | { obj: ApiObject; block?: boolean }>;
    finalizers?: string[];
  } = {},
): ApiObject {
  const metadata: ObjectMeta = { name, uid: `uid-${name}-${++uidCounter}` };
  if (opts.namespace) metadata.namespace = opts.namespace;
  if (opts.finalizers) metadata.finalizers = opts.finalizers;
  if (opts.owners) {
    metadata.ownerReferences = opts.owners.map((o) => {
      const { obj: owner, block } = 'metadata' in o ? { obj: o, block: false } : o;
      const ref: OwnerReference = {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        name: owner.metadata.name,
        uid: owner.metadata.uid!,
      };
      if (block) ref.blockOwnerDeletion = true;
      return ref;
    });
  }
  return { apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1', kind, metadata };
}
