/** Small helpers on Kubernetes objects as plain JSON. */
import { isDeepStrictEqual } from 'node:util';
import { groupVersion, type ResourceInfo } from '../registry.ts';
import type { ApiObject, JsonObject, ObjectMeta, OwnerReference } from './peers.ts';

export type { ApiObject, JsonObject, ObjectMeta, OwnerReference };

/**
 * The object's metadata, made an empty object first where a request body has none (or not an object): the
 * name the type promises is then missing until the create fills it or validation refuses the object.
 */
export function meta(obj: ApiObject): ObjectMeta {
  if (!obj.metadata || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) obj.metadata = {} as ObjectMeta;
  return obj.metadata;
}

/** RFC 3339 with seconds, as metav1.Time serialises. */
export function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The object as a client at `info.version` sees it: apiVersion of that version, resourceVersion stamped. */
export function present(info: ResourceInfo, value: ApiObject, modRevision: number): ApiObject {
  value.apiVersion = groupVersion(info.group, info.version);
  if (!value.kind) value.kind = info.kind;
  meta(value).resourceVersion = String(modRevision);
  return value;
}

/** The object as stored: storage version, no resourceVersion (that is the key's revision). */
export function toStored(info: ResourceInfo, obj: ApiObject): ApiObject {
  const out: ApiObject = { ...obj, apiVersion: groupVersion(info.group, info.storageVersion), kind: info.kind };
  const m = { ...meta(obj) };
  delete m.resourceVersion;
  delete m.selfLink;
  out.metadata = m;
  // Keep the usual field order: apiVersion, kind, metadata first.
  const { apiVersion, kind, metadata, ...rest } = out;
  return { apiVersion, kind, metadata, ...rest };
}

/**
 * Equality for no-op detection: resourceVersion never counts; managedFields only when asked (an apply
 * that makes a new manager co-own unchanged values is still a write, as in kube).
 */
export function sameContent(a: ApiObject, b: ApiObject, includeManagedFields = false): boolean {
  const strip = (o: ApiObject) => {
    const m = { ...(o.metadata ?? {}) };
    delete m.resourceVersion;
    if (!includeManagedFields) delete m.managedFields;
    return { ...o, apiVersion: undefined, metadata: m };
  };
  return isDeepStrictEqual(strip(a), strip(b));
}

export function withoutKeys(obj: JsonObject, keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** Whether metadata.generation must move: spec changes for built-ins, any non-metadata/status change for CRs. */
export function generationChanged(info: ResourceInfo, before: ApiObject, after: ApiObject): boolean {
  if (!info.tracksGeneration) return false;
  if (!info.custom) return !isDeepStrictEqual(before.spec, after.spec);
  const ignore = info.subresources.status
    ? ['metadata', 'status', 'apiVersion', 'kind']
    : ['metadata', 'apiVersion', 'kind'];
  return !isDeepStrictEqual(withoutKeys(before, ignore), withoutKeys(after, ignore));
}

const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** generateName suffix: 5 characters from kube's alphabet (no vowels, no confusable digits). */
export function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_SUFFIX_ALPHABET[Math.floor(Math.random() * NAME_SUFFIX_ALPHABET.length)];
  return s;
}

export function isPlainObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
