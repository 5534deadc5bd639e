/**
 * The forwarder's access, derived from what it watches (forwarder/watched-resources.ts): list and watch of
 * each watched collection, at the collection's scope, and nothing else. It never reads a single object and
 * never writes. It watches Secrets as metadata only, but RBAC has no metadata-only verb: the list grant
 * this derives on secrets in the product namespace would let its token read them whole.
 */
import { dedupe, type Grant } from './rbac-rules.ts';

export const FORWARDER_VERBS = ['list', 'watch'] as const;

const CORE_PATH = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?([a-z0-9.-]+)$/;
const GROUP_PATH = /^\/apis\/([^/]+)\/[^/]+\/(?:namespaces\/([^/]+)\/)?([a-z0-9.-]+)$/;

/** Group, resource and namespace of a collection path such as `/apis/apps/v1/namespaces/x/deployments`. */
export function collectionOf(path: string): { apiGroup: string; resource: string; namespace: string } {
  const core = CORE_PATH.exec(path);
  if (core) return { apiGroup: '', namespace: core[1] ?? '', resource: core[2] ?? '' };
  const grouped = GROUP_PATH.exec(path);
  if (grouped) return { apiGroup: grouped[1] ?? '', namespace: grouped[2] ?? '', resource: grouped[3] ?? '' };
  throw new TypeError(
    `path: expected a collection path like /api/v1/nodes or /apis/<group>/<version>/[namespaces/<ns>/]<resource>, got ${JSON.stringify(path)}`,
  );
}

export function forwarderGrants(watched: ReadonlyArray<{ path: string }>): Grant[] {
  return dedupe(
    watched.flatMap(({ path }) => {
      const c = collectionOf(path);
      return FORWARDER_VERBS.map((verb) => ({ ...c, verb, resourceName: '' }));
    }),
  );
}
