/**
 * Request attributes as kube-apiserver's RequestInfoFactory derives them for authorization. Differences
 * from the routing view (server/routes.ts) that matter to RBAC:
 * - discovery paths (/api, /apis/...) are non-resource requests, verb = lowercased HTTP method;
 * - /api/v1/namespaces/<ns> is in namespace <ns>, so a RoleBinding there can grant access to it;
 * - a list or watch with `fieldSelector=metadata.name=<n>` is a request for object <n> (resourceNames).
 */
import type { RouteInfo } from '../server/routes.ts';
import type { RequestAttributes } from './types.ts';

export function requestAttributes(
  method: string,
  path: string,
  route: RouteInfo,
  query: URLSearchParams,
): RequestAttributes {
  if (route.type !== 'resource') return { resourceRequest: false, verb: method.toLowerCase(), path };
  let namespace = route.namespace ?? '';
  let name = route.name ?? '';
  if (route.group === '' && route.resource === 'namespaces' && name && !namespace) namespace = name;
  if ((route.verb === 'list' || route.verb === 'watch') && !name)
    name = nameFromFieldSelector(query.get('fieldSelector')) ?? '';
  return {
    resourceRequest: true,
    verb: route.verb,
    apiGroup: route.group,
    apiVersion: route.version,
    namespace,
    resource: route.resource,
    subresource: route.subresource ?? '',
    name,
  };
}

/** fields.Selector.RequiresExactMatch("metadata.name"): `metadata.name=x` or `==x` among the terms. */
function nameFromFieldSelector(selector: string | null): string | undefined {
  if (!selector) return undefined;
  for (const term of selector.split(',')) {
    const name = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term)?.[1];
    if (name !== undefined && !name.startsWith('=')) return name;
  }
  return undefined;
}
