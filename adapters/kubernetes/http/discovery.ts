/**
 * kind → resource mapping from the apiserver's plain discovery (GET /api/v1, /apis/<group>/<version>),
 * cached per transport. A miss re-reads the group-version once, since a CRD may have just been installed.
 */
import { KubeApiError } from './errors.ts';
import type { KubeTransport } from './transport.ts';

export interface ResourceInfo {
  name: string;
  namespaced: boolean;
  kind: string;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name?: string;
}

export interface Discovery {
  resource(apiVersion: string, kind: string): Promise<ResourceInfo>;
  path(ref: ObjectRef, subresource?: string): Promise<string>;
  /**
   * The APIGroup document of a group (`GET /apis/<group>`: its versions and the preferred one), undefined
   * where the group is not served. Cached with the kinds; `fresh` reads it again (a version in use stopped
   * being served, or the cluster's CRDs changed).
   */
  group(name: string, fresh?: boolean): Promise<unknown>;
  /** Drops what is cached of a group-version's kinds: the next lookup reads them again. */
  forget(apiVersion: string): void;
}

/** The server does not serve this kind in this apiVersion (or the group-version at all). */
export class UnknownKindError extends Error {
  override name = 'UnknownKindError';
  apiVersion: string;
  kind: string;
  constructor(apiVersion: string, kind: string) {
    super(`the server does not serve kind ${kind} in ${apiVersion}`);
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}

type KindMap = Map<string, ResourceInfo>;
const caches = new WeakMap<KubeTransport, Map<string, Promise<KindMap>>>();
const groupCaches = new WeakMap<KubeTransport, Map<string, Promise<unknown>>>();

export function groupVersionPath(apiVersion: string): string {
  const parts = apiVersion.split('/');
  if (!apiVersion || parts.length > 2 || parts.some((p) => !p))
    throw new Error(`apiVersion: expected "v1" or "<group>/<version>", got ${JSON.stringify(apiVersion)}`);
  return parts.length === 1 ? `/api/${apiVersion}` : `/apis/${apiVersion}`;
}

export function discovery(transport: KubeTransport): Discovery {
  let cache = caches.get(transport);
  if (!cache) {
    cache = new Map();
    caches.set(transport, cache);
  }
  const lists = cache;

  /** The cached list unless `stale` is it, in which case one fresh read shared by every caller. */
  function kinds(apiVersion: string, stale?: Promise<KindMap>): Promise<KindMap> {
    const cached = lists.get(apiVersion);
    if (cached && cached !== stale) return cached;
    const fetching = fetchKinds(transport, apiVersion);
    lists.set(apiVersion, fetching);
    fetching.catch(() => {
      if (lists.get(apiVersion) === fetching) lists.delete(apiVersion);
    });
    return fetching;
  }

  async function resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    groupVersionPath(apiVersion); // rejects a malformed apiVersion before anything is cached under it
    const first = kinds(apiVersion);
    const hit = (await first).get(kind);
    if (hit) return hit;
    const again = (await kinds(apiVersion, first)).get(kind);
    if (again) return again;
    throw new UnknownKindError(apiVersion, kind);
  }

  async function path(ref: ObjectRef, subresource?: string): Promise<string> {
    const info = await resource(ref.apiVersion, ref.kind);
    const seg = encodeURIComponent;
    let p = groupVersionPath(ref.apiVersion);
    if (info.namespaced && ref.namespace) p += `/namespaces/${seg(ref.namespace)}`;
    else if (info.namespaced && ref.name)
      throw new Error(`namespace: ${ref.kind} ${JSON.stringify(ref.name)} is namespaced; expected a namespace`);
    p += `/${info.name}`;
    if (ref.name) p += `/${seg(ref.name)}`;
    if (subresource) {
      if (!ref.name) throw new Error(`name: subresource ${subresource} of ${ref.kind} needs an object name`);
      p += `/${subresource}`;
    }
    return p;
  }

  let groups = groupCaches.get(transport);
  if (!groups) {
    groups = new Map();
    groupCaches.set(transport, groups);
  }
  const groupDocs = groups;

  function group(name: string, fresh = false): Promise<unknown> {
    if (!/^[a-z0-9.-]+$/.test(name)) throw new Error(`group: expected a DNS subdomain, got ${JSON.stringify(name)}`);
    const cached = groupDocs.get(name);
    if (cached && !fresh) return cached;
    const fetching = transport
      .request<unknown>({ method: 'GET', path: `/apis/${name}`, notFound: 'absent' })
      .then((doc) => doc ?? undefined);
    groupDocs.set(name, fetching);
    fetching.catch(() => {
      if (groupDocs.get(name) === fetching) groupDocs.delete(name);
    });
    return fetching;
  }

  return { resource, path, group, forget: (apiVersion) => void lists.delete(apiVersion) };
}

async function fetchKinds(transport: KubeTransport, apiVersion: string): Promise<KindMap> {
  const kinds: KindMap = new Map();
  let list: { resources?: Array<{ name?: unknown; namespaced?: unknown; kind?: unknown }> };
  try {
    list = await transport.request({ method: 'GET', path: groupVersionPath(apiVersion) });
  } catch (err) {
    // A group-version that is not served at all is a miss like any other unknown kind.
    if (err instanceof KubeApiError && err.code === 404) return kinds;
    throw err;
  }
  for (const r of list.resources ?? []) {
    // Entries like deployments/status are subresources, not kinds.
    if (typeof r.name !== 'string' || r.name.includes('/') || typeof r.kind !== 'string') continue;
    if (!kinds.has(r.kind)) kinds.set(r.kind, { name: r.name, namespaced: r.namespaced === true, kind: r.kind });
  }
  return kinds;
}
