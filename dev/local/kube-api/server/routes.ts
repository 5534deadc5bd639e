/**
 * URL → request info, following kube-apiserver's RequestInfoFactory: API prefix, group, version,
 * namespace, resource, name, subresource and the Kubernetes verb.
 */

export interface ResourceRequest {
  type: 'resource';
  verb: string;
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

export type RouteInfo =
  | ResourceRequest
  | { type: 'discovery'; verb: 'get'; path: 'api' | 'apis' | 'group' | 'groupVersion'; group: string; version?: string }
  | { type: 'nonResource'; verb: string; path: string };

/** Subresources of a namespace, which must not be read as "resource in namespace". */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseRoute(method: string, pathname: string, query: URLSearchParams): RouteInfo {
  const parts = pathname.split('/').filter((p) => p !== '');
  const nonResource = (): RouteInfo => ({ type: 'nonResource', verb: method.toLowerCase(), path: pathname });
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { type: 'discovery', verb: 'get', path: 'api', group: '' };
    group = '';
    version = parts[1];
    rest = parts.slice(2);
    if (rest.length === 0) return { type: 'discovery', verb: 'get', path: 'groupVersion', group, version };
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { type: 'discovery', verb: 'get', path: 'apis', group: '' };
    group = parts[1];
    if (parts.length === 2) return { type: 'discovery', verb: 'get', path: 'group', group };
    version = parts[2];
    rest = parts.slice(3);
    if (rest.length === 0) return { type: 'discovery', verb: 'get', path: 'groupVersion', group, version };
  } else {
    return nonResource();
  }
  rest = rest.map(decodeURIComponent);

  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  }
  const resource = rest[0];
  let name = rest[1];
  const subresource = rest[2];
  if (resource === 'namespaces' && namespace !== undefined && rest[1] === namespace) {
    // /api/v1/namespaces/<ns>[/status]: the namespace object itself.
    name = namespace;
    namespace = undefined;
  }
  if (rest.length > 3) return nonResource();

  let verb: string;
  switch (method) {
    case 'GET':
    case 'HEAD': {
      const watch = query.get('watch');
      if (watch === 'true' || watch === '1') verb = 'watch';
      else verb = name === undefined ? 'list' : 'get';
      break;
    }
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      verb = method.toLowerCase();
  }
  return { type: 'resource', verb, group, version, namespace, resource, name, subresource };
}
