/**
 * What a Kubernetes API request is about, read from its method, path and query alone (the proxy never
 * needs the body for this): verb, group, resource, subresource, namespace and name, as kube-apiserver's
 * RequestInfoFactory derives them.
 */

export interface KubeRequestInfo {
  /** get, list, watch, create, update, patch, delete, deletecollection; the lowercased method for non-resource paths. */
  verb: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const truthy = (v: string | null) => v === 'true' || v === '1';

export function kubeRequestInfo(method: string, path: string, query: URLSearchParams): KubeRequestInfo {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  let rest: string[];
  let group: string | undefined;
  let version: string | undefined;
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return { verb: method.toLowerCase() };
  }
  // A bare group-version path is discovery, not a resource.
  if (rest.length === 0) return { verb: method.toLowerCase(), group, version };
  let namespace: string | undefined;
  // `/namespaces/x/status` and `/namespaces/x/finalize` are the Namespace's own subresources.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest;
  const info: KubeRequestInfo = { verb: '', group, version, resource };
  if (namespace !== undefined) info.namespace = namespace;
  if (name !== undefined) info.name = name;
  if (subresource !== undefined) info.subresource = subresource;
  info.verb = verbOf(method, name !== undefined, truthy(query.get('watch')));
  return info;
}

function verbOf(method: string, hasName: boolean, watch: boolean): string {
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
