/**
 * Plain (non-aggregated) discovery: /api, /apis, /apis/<group>, and the resource lists of each
 * group/version, built from the registry. kubectl asks for aggregated discovery first and falls back to
 * this when the reply's Content-Type is plain JSON.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { groupVersion, isCoreResource, type ResourceInfo, type ResourceRegistry } from '../registry.ts';

/** Where kube-apiserver still encodes a kind in etcd at an older version than the one served (and hashes that). */
const ENCODED_VERSION: Record<string, string> = { 'apiextensions.k8s.io/customresourcedefinitions': 'v1beta1' };

/** apimachinery's StorageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind"). */
function storageVersionHash(info: ResourceInfo): string {
  const version = ENCODED_VERSION[`${info.group}/${info.resource}`] ?? info.storageVersion;
  return createHash('sha256')
    .update(`${info.group}/${version}/${info.kind}`)
    .digest()
    .subarray(0, 8)
    .toString('base64');
}

export function apiVersions(req: IncomingMessage): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: req.headers.host ?? '' }],
  };
}

function groupEntry(g: { name: string; versions: string[]; preferredVersion: string }) {
  return {
    name: g.name,
    versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${g.name}/${g.preferredVersion}`, version: g.preferredVersion },
  };
}

export function apiGroupList(registry: ResourceRegistry): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: registry.groups().map(groupEntry) };
}

export function apiGroup(registry: ResourceRegistry, group: string): unknown | undefined {
  const g = registry.groups().find((x) => x.name === group);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g) } : undefined;
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): unknown | undefined {
  const infos = registry.inGroupVersion(group, version).sort((a, b) => (a.resource < b.resource ? -1 : 1));
  if (!infos.length && !(group === '' && version === 'v1')) return undefined;
  const resources: unknown[] = [];
  for (const info of infos) {
    const entry: Record<string, unknown> = {
      name: info.resource,
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: info.verbs,
    };
    if (info.shortNames.length) entry.shortNames = info.shortNames;
    if (info.categories.length) entry.categories = info.categories;
    entry.storageVersionHash = storageVersionHash(info);
    resources.push(entry);
    if (isCoreResource(info, 'pods')) {
      resources.push({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
    }
    if (info.subresources.status) {
      resources.push({
        name: `${info.resource}/status`,
        singularName: '',
        namespaced: info.namespaced,
        kind: info.kind,
        verbs: ['get', 'patch', 'update'],
      });
    }
    if (info.subresources.scale) {
      resources.push({
        name: `${info.resource}/scale`,
        singularName: '',
        namespaced: info.namespaced,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      });
    }
    if (info.group === '' && info.resource === 'namespaces') {
      resources.push({
        name: 'namespaces/finalize',
        singularName: '',
        namespaced: false,
        kind: 'Namespace',
        verbs: ['update'],
      });
    }
  }
  // kube's legacy /api/v1 list carries no apiVersion; the group versions' lists do.
  return {
    kind: 'APIResourceList',
    ...(group ? { apiVersion: 'v1' } : {}),
    groupVersion: groupVersion(group, version),
    resources,
  };
}

export const VERSION_INFO = {
  major: '1',
  minor: '36',
  // The release it is measured against (docs/local-kube-api.md); "-local" says it is not that build.
  gitVersion: 'v1.36.3-local',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
  emulationMajor: '1',
  emulationMinor: '36',
  minCompatibilityMajor: '1',
  minCompatibilityMinor: '35',
};
