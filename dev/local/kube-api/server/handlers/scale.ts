/**
 * The scale subresource (autoscaling/v1 Scale) of Deployments and of custom resources whose CRD
 * declares one: GET reads replicas and selector through the resource's paths; PUT and PATCH change only
 * the replicas of the underlying object (what `kubectl scale` does).
 */

import type { ResourceInfo, ScalePaths } from '../../registry.ts';
import { labelSelectorFromMeta, labelSelectorToString } from '../../selectors.ts';
import { bodyFormat, decodePatchBody, mediaType, parseText, readBody } from '../body.ts';
import { ApiError, badRequest, cause, invalid } from '../errors.ts';
import { type ApiObject, isPlainObject, type JsonObject } from '../objects.ts';
import { patchModule } from '../peers.ts';
import { sendJson } from '../respond.ts';
import { type Scope, writeOptions } from './scope.ts';

function pathKeys(path: string): string[] {
  return path.replace(/^\./, '').split('.');
}

/** The value at a dotted path, `obj?.a?.b` (a primitive's own properties read as JavaScript reads them). */
function readPath(obj: JsonObject, path: string): unknown {
  return pathKeys(path).reduce<unknown>((acc, k) => (acc == null ? undefined : (acc as JsonObject)[k]), obj);
}

function writePath(obj: JsonObject, path: string, value: unknown): void {
  const keys = pathKeys(path);
  const leaf = keys.pop() ?? ''; // split returns at least one part
  let cur = obj;
  for (const k of keys) {
    const next = cur[k];
    if (isPlainObject(next)) cur = next;
    else {
      const created: JsonObject = {};
      cur[k] = created;
      cur = created;
    }
  }
  cur[leaf] = value;
}

function selectorString(info: ResourceInfo, obj: ApiObject, paths: ScalePaths): string | undefined {
  if (!paths.labelSelectorPath) return undefined;
  const raw = readPath(obj, paths.labelSelectorPath);
  if (typeof raw === 'string') return raw;
  if (!info.custom && isPlainObject(raw)) {
    const sel = labelSelectorFromMeta(raw as never);
    return sel ? labelSelectorToString(sel) : undefined;
  }
  return undefined;
}

export function toScale(info: ResourceInfo, obj: ApiObject): JsonObject {
  const paths = info.subresources.scale!;
  const m = obj.metadata;
  const status: JsonObject = { replicas: Number(readPath(obj, paths.statusReplicasPath) ?? 0) };
  const selector = selectorString(info, obj, paths);
  if (selector) status.selector = selector;
  const metadata: JsonObject = {
    name: m.name,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    creationTimestamp: m.creationTimestamp,
  };
  if (m.namespace) metadata.namespace = m.namespace;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: { replicas: Number(readPath(obj, paths.specReplicasPath) ?? 0) },
    status,
  };
}

function replicasOf(scale: unknown, name: string): number {
  const spec = (scale as JsonObject | null | undefined)?.spec as JsonObject | null | undefined;
  const replicas = spec?.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid({ group: 'autoscaling', kind: 'Scale' }, name, [
      cause(
        'FieldValueInvalid',
        'spec.replicas',
        `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
      ),
    ]);
  }
  return replicas;
}

export async function handleScale(s: Scope): Promise<void> {
  const { info, route } = s;
  const name = route.name!;
  if (route.verb === 'get') {
    sendJson(s.res, 200, toScale(info, await s.store.mustGet(info, route.namespace, name)));
    return;
  }
  const opts = writeOptions(s, route.verb === 'update' ? 'UpdateOptions' : 'PatchOptions');
  const raw = await readBody(s.req);
  const type = mediaType(s.req.headers['content-type']);
  let change: (scale: JsonObject) => JsonObject;
  if (route.verb === 'update') {
    const body = parseText(raw, bodyFormat(s.req.headers['content-type']));
    if (!isPlainObject(body)) throw badRequest('the object provided is unrecognized (must be of type Scale)');
    change = () => body;
  } else {
    const patch = decodePatchBody(raw, type === 'application/apply-patch+yaml' ? 'yaml' : 'json');
    change = (scale) => {
      if (type === 'application/json-patch+json') return patchModule.applyJsonPatch(scale, patch as never);
      if (
        type === 'application/merge-patch+json' ||
        type === 'application/strategic-merge-patch+json' ||
        type === 'application/apply-patch+yaml'
      ) {
        return patchModule.applyMergePatch(scale, patch as never);
      }
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
    };
  }
  const updated = await s.store.update(info, route.namespace, name, undefined, opts, (current) => {
    const desired = change(toScale(info, current));
    const rv = (desired.metadata as JsonObject | null | undefined)?.resourceVersion;
    // As sent (a number too): the store reports the conflict.
    if (rv && rv !== current.metadata.resourceVersion) current.metadata.resourceVersion = rv as string;
    writePath(current, info.subresources.scale!.specReplicasPath, replicasOf(desired, name));
    return current;
  });
  sendJson(s.res, 200, toScale(info, updated), s.warnings);
}
