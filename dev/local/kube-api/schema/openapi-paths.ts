/**
 * The `paths` of a per-group-version OpenAPI v3 document, as kube-apiserver publishes them. kubectl reads
 * two things here: whether a kind's PATCH operation lists the `fieldValidation` query parameter (then it
 * leaves validation to the server; kubectl's QueryParamVerifierV3), and whether that PATCH accepts
 * `application/strategic-merge-patch+json` (then client-side apply computes a strategic merge patch from
 * the components, otherwise a JSON merge patch). Operations are matched to kinds through
 * `x-kubernetes-group-version-kind`.
 */
import { DELETE_OPTIONS, type Gvk, PATCH, ref, STATUS, WATCH_EVENT } from './openapi-components.ts';

type Json = Record<string, unknown>;

export interface PathResource extends Gvk {
  resource: string;
  namespaced: boolean;
  verbs: string[];
  subresources: { status: boolean; scale: boolean };
  /** Served from a CRD: no strategic merge patch, like kube's CRD handler. */
  custom: boolean;
}

const query = (name: string, type: 'string' | 'boolean' | 'integer', description: string) => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});
const pathParam = (name: string, description: string) => ({
  name,
  in: 'path',
  description,
  required: true,
  schema: { type: 'string', uniqueItems: true },
});

const P = {
  pretty: query('pretty', 'string', "If 'true', then the output is pretty printed."),
  dryRun: query('dryRun', 'string', 'When present, indicates that modifications should not be persisted.'),
  fieldManager: query(
    'fieldManager',
    'string',
    'fieldManager is a name associated with the actor or entity that is making these changes.',
  ),
  fieldValidation: query(
    'fieldValidation',
    'string',
    'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict.',
  ),
  force: query('force', 'boolean', 'Force is going to "force" Apply requests.'),
  allowWatchBookmarks: query(
    'allowWatchBookmarks',
    'boolean',
    'allowWatchBookmarks requests watch events with type "BOOKMARK".',
  ),
  continue: query(
    'continue',
    'string',
    'The continue option should be set when retrieving more results from the server.',
  ),
  fieldSelector: query(
    'fieldSelector',
    'string',
    'A selector to restrict the list of returned objects by their fields.',
  ),
  labelSelector: query(
    'labelSelector',
    'string',
    'A selector to restrict the list of returned objects by their labels.',
  ),
  limit: query('limit', 'integer', 'limit is a maximum number of responses to return for a list call.'),
  resourceVersion: query(
    'resourceVersion',
    'string',
    'resourceVersion sets a constraint on what resource versions a request may be served from.',
  ),
  resourceVersionMatch: query(
    'resourceVersionMatch',
    'string',
    'resourceVersionMatch determines how resourceVersion is applied to list calls.',
  ),
  sendInitialEvents: query(
    'sendInitialEvents',
    'boolean',
    '`sendInitialEvents=true` may be set together with `watch=true`.',
  ),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  watch: query(
    'watch',
    'boolean',
    'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.',
  ),
  gracePeriodSeconds: query(
    'gracePeriodSeconds',
    'integer',
    'The duration in seconds before the object should be deleted.',
  ),
  orphanDependents: query(
    'orphanDependents',
    'boolean',
    'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7.',
  ),
  propagationPolicy: query('propagationPolicy', 'string', 'Whether and how garbage collection will be performed.'),
  name: pathParam('name', 'name of the resource'),
  namespace: pathParam('namespace', 'object name and auth scope, such as for teams and projects'),
};

const LIST_PARAMS = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy];

export function resourcePaths(
  r: PathResource,
  names: { item: string; list: string; scale?: string },
): Record<string, Json> {
  const prefix = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const collection = r.namespaced ? `${prefix}/namespaces/{namespace}/${r.resource}` : `${prefix}/${r.resource}`;
  const item = `${collection}/{name}`;
  const scopeParams = r.namespaced ? [P.namespace] : [];
  const can = (verb: string) => r.verbs.includes(verb);
  const op = operationFactory(r);
  const paths: Record<string, Json> = {};

  const collectionOps: Json = {};
  if (can('list')) collectionOps.get = op('list', '', names.list, LIST_PARAMS);
  if (can('create')) collectionOps.post = op('post', '', names.item, WRITE_PARAMS, { body: names.item, created: true });
  if (can('deletecollection')) {
    collectionOps.delete = op(
      'deletecollection',
      '',
      STATUS,
      [...LIST_PARAMS.filter((p) => p !== P.watch && p !== P.allowWatchBookmarks), ...DELETE_PARAMS],
      { body: DELETE_OPTIONS },
    );
  }
  if (Object.keys(collectionOps).length > 0)
    paths[collection] = { ...collectionOps, parameters: [...scopeParams, P.pretty] };

  const itemOps: Json = {};
  if (can('get')) itemOps.get = op('get', '', names.item, []);
  if (can('update')) itemOps.put = op('put', '', names.item, WRITE_PARAMS, { body: names.item, created: true });
  if (can('patch'))
    itemOps.patch = op('patch', '', names.item, [...WRITE_PARAMS, P.force], { patch: true, created: true });
  if (can('delete'))
    itemOps.delete = op('delete', '', names.item, DELETE_PARAMS, { body: DELETE_OPTIONS, accepted: true });
  if (Object.keys(itemOps).length > 0) paths[item] = { ...itemOps, parameters: [P.name, ...scopeParams, P.pretty] };

  if (r.namespaced && can('list')) {
    paths[`${prefix}/${r.resource}`] = {
      get: op('list', 'ForAllNamespaces', names.list, []),
      parameters: [...LIST_PARAMS, P.pretty],
    };
  }
  for (const [sub, enabled, schemaName, gvk] of [
    ['status', r.subresources.status, names.item, r],
    ['scale', r.subresources.scale, names.scale, { group: 'autoscaling', version: 'v1', kind: 'Scale' }],
  ] as const) {
    if (!enabled || !schemaName) continue;
    const subOp = operationFactory(r, sub, gvk);
    paths[`${item}/${sub}`] = {
      get: subOp('get', '', schemaName, []),
      put: subOp('put', '', schemaName, WRITE_PARAMS, { body: schemaName, created: true }),
      patch: subOp('patch', '', schemaName, [...WRITE_PARAMS, P.force], { patch: true, created: true }),
      parameters: [P.name, ...scopeParams, P.pretty],
    };
  }
  return paths;
}

interface OpExtras {
  body?: string;
  patch?: boolean;
  created?: boolean;
  accepted?: boolean;
}

const VERB_WORD: Record<string, string> = {
  get: 'read',
  list: 'list',
  post: 'create',
  put: 'replace',
  patch: 'patch',
  delete: 'delete',
  deletecollection: 'deleteCollection',
};

function operationFactory(r: PathResource, subresource = '', gvk: Gvk = r) {
  const groupWord = groupCamel(r.group);
  const tag = `${groupWord.charAt(0).toLowerCase()}${groupWord.slice(1)}_${r.version}`;
  return (action: string, suffix: string, schemaName: string, params: Json[], extras: OpExtras = {}): Json => {
    const verbWord = VERB_WORD[action];
    const scoped = r.namespaced && suffix !== 'ForAllNamespaces' ? 'Namespaced' : '';
    const collection = action === 'deletecollection' ? 'Collection' : '';
    const verb = action === 'deletecollection' ? 'delete' : verbWord;
    // kube's operation ids: listAppsV1NamespacedDeployment, deleteCoreV1CollectionNamespacedPod, ...
    const operationId = `${verb}${groupWord}${upperFirst(r.version)}${collection}${scoped}${r.kind}${upperFirst(subresource)}${suffix}`;
    const responses: Json = { '200': jsonResponse('OK', schemaName), '401': { description: 'Unauthorized' } };
    if (extras.created) responses['201'] = jsonResponse('Created', schemaName);
    if (extras.accepted) responses['202'] = jsonResponse('Accepted', schemaName);
    if (action === 'list') {
      (responses['200'] as { content: Json }).content['application/json;stream=watch'] = { schema: ref(WATCH_EVENT) };
    }
    const operation: Json = {
      tags: [tag],
      description: `${verb} ${subresource ? `${subresource} of ` : ''}the specified ${r.kind}`,
      operationId,
      parameters: params,
      responses,
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': { group: gvk.group, kind: gvk.kind, version: gvk.version },
    };
    if (extras.body)
      operation.requestBody = {
        content: { '*/*': { schema: ref(extras.body) } },
        required: action !== 'delete' && action !== 'deletecollection',
      };
    if (extras.patch) {
      const types = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json'];
      if (!r.custom) types.push('application/strategic-merge-patch+json');
      operation.requestBody = {
        content: Object.fromEntries(types.map((t) => [t, { schema: ref(PATCH) }])),
        required: true,
      };
    }
    return operation;
  };
}

function jsonResponse(description: string, schemaName: string): Json {
  return {
    description,
    content: { 'application/json': { schema: ref(schemaName) }, 'application/yaml': { schema: ref(schemaName) } },
  };
}

/** `rbac.authorization.k8s.io` → `RbacAuthorization`, `` → `Core`, `apps.openyurt.io` → `AppsOpenyurtIo`. */
export function groupCamel(group: string): string {
  if (!group) return 'Core';
  return group
    .replace(/\.k8s\.io$/, '')
    .split(/[.-]/)
    .map(upperFirst)
    .join('');
}

function upperFirst(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
