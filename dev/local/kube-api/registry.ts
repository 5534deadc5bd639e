/**
 * The resource registry: every group/version/resource the local API serves, with its scope, names,
 * verbs, subresources, storage key prefix and schema. Built-in kinds are data in builtin-resources.ts;
 * custom resources are added and removed as CRDs come and go (crd-resources.ts), so the HTTP layer never
 * has code per kind.
 */

import type { SchemaNode } from './schema/types.ts';
import { resourcePrefix } from './storage/keys.ts';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

/** Where the scale subresource reads and writes (a CRD's subresources.scale; fixed for Deployments). */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  /** `.spec.selector` of a Deployment is a LabelSelector; a CR's labelSelectorPath holds a string. */
  labelSelectorPath?: string;
}

export interface ResourceInfo {
  group: string;
  version: string;
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  /** Subresources served besides the object itself: status, and scale with the paths it maps. */
  subresources: { status: boolean; scale?: ScalePaths };
  /** etcd key prefix without trailing slash, e.g. `/registry/minions`. */
  keyPrefix: string;
  /** Version objects are stored in; other served versions are views (conversion strategy None). */
  storageVersion: string;
  /** Served from a CRD (unstructured, no strategic merge patch). */
  custom: boolean;
  /** metadata.generation is maintained (CRs, and built-ins with a spec that controllers observe). */
  tracksGeneration: boolean;
  printerColumns?: PrinterColumn[];
  /** CRD selectableFields json paths (e.g. `.spec.color`), usable in field selectors. */
  selectableFields?: string[];
  /** Name of the owning CRD for custom resources. */
  crdName?: string;
  schema(): SchemaNode | undefined;
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** `pods` or `deployments.apps`: the form kube-apiserver uses in error messages. */
/** Whether `info` is the built-in core (group "") resource of that name, not a custom one that shares it. */
export function isCoreResource(info: { custom: boolean; group: string; resource: string }, resource: string): boolean {
  return !info.custom && info.group === '' && info.resource === resource;
}

export function qualifiedResource(info: { group: string; resource: string }): string {
  return info.group ? `${info.resource}.${info.group}` : info.resource;
}

export function makeResourceInfo(
  fields: Omit<ResourceInfo, 'keyPrefix' | 'listKind' | 'singular' | 'storageVersion' | 'schema'> &
    Partial<Pick<ResourceInfo, 'listKind' | 'singular' | 'storageVersion' | 'keyPrefix'>> & {
      schema?: () => SchemaNode | undefined;
    },
): ResourceInfo {
  return {
    ...fields,
    listKind: fields.listKind ?? `${fields.kind}List`,
    singular: fields.singular ?? fields.kind.toLowerCase(),
    storageVersion: fields.storageVersion ?? fields.version,
    keyPrefix: fields.keyPrefix ?? resourcePrefix(fields),
    schema: fields.schema ?? (() => undefined),
  };
}

export interface GroupSummary {
  name: string;
  versions: string[];
  preferredVersion: string;
}

/** Kube's version priority: GA > beta > alpha, higher numbers first. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0, v] as const;
    const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [1, stage, Number(m[1]), Number(m[3] ?? 0)] as const;
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 4; i++) {
    if (pa[i] !== pb[i]) {
      if (typeof pa[i] === 'string') return String(pa[i]) < String(pb[i]) ? -1 : 1;
      return (pb[i] as number) - (pa[i] as number);
    }
  }
  return 0;
}

export class ResourceRegistry {
  /** key: `<group>/<version>/<resource>` */
  private readonly byGvr = new Map<string, ResourceInfo>();
  private readonly listeners = new Set<() => void>();

  add(info: ResourceInfo): void {
    this.byGvr.set(`${info.group}/${info.version}/${info.resource}`, info);
    this.changed();
  }

  remove(group: string, version: string, resource: string): void {
    if (this.byGvr.delete(`${group}/${version}/${resource}`)) this.changed();
  }

  /** Removes every version of a custom resource served from the named CRD. */
  removeCrd(crdName: string): void {
    let removed = false;
    for (const [k, info] of this.byGvr) {
      if (info.crdName === crdName) {
        this.byGvr.delete(k);
        removed = true;
      }
    }
    if (removed) this.changed();
  }

  get(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.byGvr.get(`${group}/${version}/${resource}`);
  }

  /** Finds the served version for an apiVersion/kind pair (owner references, GC). */
  byKind(apiVersion: string, kind: string): ResourceInfo | undefined {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    for (const info of this.byGvr.values()) {
      if (info.group === group && info.version === version && info.kind === kind) return info;
    }
    // Fall back to any served version of the same group/kind (objects are shared across versions).
    for (const info of this.byGvr.values()) {
      if (info.group === group && info.kind === kind) return info;
    }
    return undefined;
  }

  all(): ResourceInfo[] {
    return [...this.byGvr.values()];
  }

  /** One entry per group/resource, at its storage version: what to walk when visiting every object. */
  storedResources(): ResourceInfo[] {
    const seen = new Map<string, ResourceInfo>();
    for (const info of this.byGvr.values()) {
      const k = `${info.group}/${info.resource}`;
      const prev = seen.get(k);
      if (!prev || info.version === info.storageVersion) seen.set(k, info);
    }
    return [...seen.values()];
  }

  inGroupVersion(group: string, version: string): ResourceInfo[] {
    return this.all().filter((i) => i.group === group && i.version === version);
  }

  /** Named API groups (not the legacy core group), versions sorted by kube's priority. */
  groups(): GroupSummary[] {
    const versions = new Map<string, Set<string>>();
    for (const info of this.byGvr.values()) {
      if (!info.group) continue;
      let set = versions.get(info.group);
      if (!set) {
        set = new Set();
        versions.set(info.group, set);
      }
      set.add(info.version);
    }
    return [...versions.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, vs]) => {
        const sorted = [...vs].sort(compareVersions);
        const [preferredVersion = ''] = sorted; // every group here has a version
        return { name, versions: sorted, preferredVersion };
      });
  }

  /** Called after any change; discovery caches and OpenAPI documents listen. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
