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

type RouteInfo =
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
  // Each is undefined when the path is shorter (the parts are non-empty strings).
  const [prefix, first, second] = parts;
  if (prefix === 'api') {
    if (first === undefined) return { type: 'discovery', verb: 'get', path: 'api', group: '' };
    group = '';
    version = first;
    rest = parts.slice(2);
    if (rest.length === 0) return { type: 'discovery', verb: 'get', path: 'groupVersion', group, version };
  } else if (prefix === 'apis') {
    if (first === undefined) return { type: 'discovery', verb: 'get', path: 'apis', group: '' };
    group = first;
    if (second === undefined) return { type: 'discovery', verb: 'get', path: 'group', group };
    version = second;
    rest = parts.slice(3);
    if (rest.length === 0) return { type: 'discovery', verb: 'get', path: 'groupVersion', group, version };
  } else {
    return nonResource();
  }
  rest = rest.map(decodeURIComponent);

  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    const afterNamespace = rest[2];
    if (afterNamespace !== undefined && !NAMESPACE_SUBRESOURCES.has(afterNamespace)) rest = rest.slice(2);
  }
  const resource = rest[0] ?? ''; // rest is not empty here
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
