/**
 * The OpenAPI v3 discovery kube-apiserver serves at /openapi/v3: an index of group-versions, each with a
 * content-hashed URL, and one OpenAPI 3.0 document per group-version with paths and components.
 */
import { createHash } from 'node:crypto';
import { ComponentSet } from './openapi-components.ts';
import { type PathResource, resourcePaths } from './openapi-paths.ts';
import type { SchemaNode } from './types.ts';

/** A served resource, as the registry describes it (ResourceInfo fits) or as plain data. */
export interface OpenApiResource {
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespaced: boolean;
  schema?: SchemaNode | (() => SchemaNode | undefined);
  /** `['status', 'scale']` or the registry's `{ status, scale }`. */
  subresources?: string[] | { status?: boolean; scale?: boolean };
  /** Defaults to all verbs. */
  verbs?: string[];
  /** Served from a CRD: the schema given is used as is and strategic merge patch is not offered. */
  custom?: boolean;
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** `v1` → `api/v1`, `apps/v1` → `apis/apps/v1`: the keys kubectl looks group-versions up by. */
export function openApiV3PathKey(groupVersion: string): string {
  return groupVersion.includes('/') ? `apis/${groupVersion}` : `api/${groupVersion}`;
}

/** The hash kube puts in serverRelativeURL: SHA-512 of the served document, upper-case hex. */
export function openApiV3Hash(document: unknown): string {
  return createHash('sha512').update(JSON.stringify(document)).digest('hex').toUpperCase();
}

/**
 * The /openapi/v3 root. Pass the documents (by group-version) so each URL's hash changes when its
 * document does: kubectl caches documents by URL, so a stale hash would hide a new CRD schema.
 * Without documents the hash only depends on the group-version name.
 */
export function openApiV3Index(
  groupVersions: Array<string | { group: string; version: string }>,
  documents?: Record<string, unknown>,
): object {
  const names = [
    ...new Set(
      groupVersions.map((gv) => (typeof gv === 'string' ? gv : gv.group ? `${gv.group}/${gv.version}` : gv.version)),
    ),
  ];
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const gv of names.sort((a, b) => (openApiV3PathKey(a) < openApiV3PathKey(b) ? -1 : 1))) {
    const key = openApiV3PathKey(gv);
    const hash = openApiV3Hash(documents?.[gv] ?? key);
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { paths };
}

/** The OpenAPI 3.0 document for one group-version. */
export function openApiV3Document(groupVersion: string, resources: OpenApiResource[]): object {
  const components = new ComponentSet();
  components.addCommon();
  const paths: Record<string, unknown> = {};
  const sorted = [...resources].sort((a, b) => a.resource.localeCompare(b.resource));
  for (const r of sorted) {
    const gv = r.group ? `${r.group}/${r.version}` : r.version;
    if (gv !== groupVersion) throw new Error(`resource ${r.resource} is in ${gv}, not ${groupVersion}`);
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const custom = r.custom ?? false;
    const item = (!custom && components.addBuiltinKind(gvk)) || components.addCustomKind(gvk, schemaOf(r));
    const list = components.addList(gvk, item);
    const sub = subresourceFlags(r.subresources);
    const scale = sub.scale ? components.addScale() : undefined;
    const pathResource: PathResource = {
      ...gvk,
      resource: r.resource,
      namespaced: r.namespaced,
      verbs: r.verbs ?? ALL_VERBS,
      subresources: sub,
      custom,
    };
    Object.assign(paths, resourcePaths(pathResource, { item, list, scale }));
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas: sortKeys(components.schemas) },
  };
}

function schemaOf(r: OpenApiResource): SchemaNode | undefined {
  return typeof r.schema === 'function' ? r.schema() : r.schema;
}

function subresourceFlags(sub: OpenApiResource['subresources']): { status: boolean; scale: boolean } {
  if (Array.isArray(sub)) return { status: sub.includes('status'), scale: sub.includes('scale') };
  return { status: sub?.status === true, scale: sub?.scale === true };
}

function sortKeys<T>(obj: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
