/**
 * kube-apiserver's etcd key layout, so a local etcd can be inspected with the same etcdctl commands as a
 * real cluster's. Built-in resources live at /registry/<resource>/[<namespace>/]<name> (with a few
 * historical renames); custom resources and CRDs at /registry/<group>/<resource>/[<namespace>/]<name>.
 */
import { GROUPS_KEYED_WITH_GROUP, isKubernetesApiGroup } from '../api-groups.ts';

export interface KeyedResource {
  group: string;
  resource: string;
}

/** Historical key names that differ from the resource name (kube-apiserver's storage REST options). */
const RENAMED: Record<string, string> = {
  '/nodes': 'minions',
  '/services': 'services/specs',
  '/endpoints': 'services/endpoints',
  '/replicationcontrollers': 'controllers',
  'networking.k8s.io/ingresses': 'ingress',
  'policy/podsecuritypolicies': 'podsecuritypolicy',
};

/** The key prefix of a resource, without the trailing slash: e.g. `/registry/minions`. */
export function resourcePrefix(res: KeyedResource): string {
  const renamed = RENAMED[`${res.group}/${res.resource}`];
  if (renamed) return `/registry/${renamed}`;
  if (isKubernetesApiGroup(res.group) && !GROUPS_KEYED_WITH_GROUP.has(res.group)) return `/registry/${res.resource}`;
  return `/registry/${res.group}/${res.resource}`;
}

/** Key of one object; `namespace` is ignored (pass undefined) for cluster-scoped resources. */
export function objectKey(res: KeyedResource, namespace: string | undefined, name: string): string {
  return namespace ? `${resourcePrefix(res)}/${namespace}/${name}` : `${resourcePrefix(res)}/${name}`;
}

/** Prefix covering every object of the resource, or of one namespace; always ends with `/`. */
export function listPrefix(res: KeyedResource, namespace?: string): string {
  return namespace ? `${resourcePrefix(res)}/${namespace}/` : `${resourcePrefix(res)}/`;
}

/** Splits a key back into namespace and name, given the resource's scope. */
export function parseObjectKey(
  res: KeyedResource,
  namespaced: boolean,
  key: string,
): { namespace?: string; name: string } | undefined {
  const prefix = `${resourcePrefix(res)}/`;
  if (!key.startsWith(prefix)) return undefined;
  const rest = key.slice(prefix.length);
  if (!namespaced) return rest.includes('/') ? undefined : { name: rest };
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
}
