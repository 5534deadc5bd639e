/**
 * PATCH, dispatched on Content-Type: JSON merge patch, JSON patch, strategic merge patch (built-in kinds
 * only, 415 for custom resources as kube does) and server-side apply (creates when missing).
 */

import { ApplyConflictError, PatchError, PatchInternalError } from '../../patch/types.ts';
import { groupVersion } from '../../registry.ts';
import { decodePatchBody, mediaType, readBody } from '../body.ts';
import { ApiError, badRequest } from '../errors.ts';
import { type ApiObject, isPlainObject, type JsonObject, type ObjectMeta, timestamp } from '../objects.ts';
import { patchModule } from '../peers.ts';
import { negotiate, sendJson } from '../respond.ts';
import { resetFields } from '../store.ts';
import { renderObject } from './render.ts';
import { type Scope, writeOptions } from './scope.ts';

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
type PatchType = (typeof PATCH_TYPES)[number];

function patchType(s: Scope): PatchType {
  const mt = mediaType(s.req.headers['content-type']);
  const allowed: readonly string[] = s.info.custom
    ? PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json')
    : PATCH_TYPES;
  if (!allowed.includes(mt)) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${allowed.join(', ')}`,
    );
  }
  return mt as PatchType;
}

function patchFailure(err: unknown): never {
  if (err instanceof PatchError) {
    throw new ApiError(err.status, err.status === 400 ? 'BadRequest' : 'Invalid', err.message);
  }
  if (err instanceof PatchInternalError) throw new ApiError(500, err.reason, err.message);
  throw err;
}

/** The 409 Conflict kube sends for apply conflicts; the patch module words message and causes. */
export function applyConflictError(err: ApplyConflictError): ApiError {
  const status = patchModule.applyConflictStatus(err);
  return new ApiError(409, 'Conflict', status.message, status.details);
}

export async function handlePatch(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, true);
  const type = patchType(s);
  const isApply = type === 'application/apply-patch+yaml';
  const opts = writeOptions(s, 'PatchOptions', isApply);
  const raw = await readBody(s.req);
  const patch = decodePatchBody(raw, isApply ? 'yaml' : 'json');
  const { info, route } = s;
  const name = route.name!;

  if (!isApply) {
    if (type === 'application/json-patch+json' ? !Array.isArray(patch) : !isPlainObject(patch)) {
      throw badRequest(
        type === 'application/json-patch+json'
          ? 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'
          : 'error decoding patch: the patch must be a JSON object',
      );
    }
    const updated = await s.store.update(info, route.namespace, name, route.subresource, opts, (current) => {
      // The patched object, whatever the patch made of it: the store checks it as it checks a body.
      try {
        if (type === 'application/merge-patch+json') return patchModule.applyMergePatch(current, patch) as ApiObject;
        if (type === 'application/json-patch+json') return patchModule.applyJsonPatch(current, patch) as ApiObject;
        return patchModule.applyStrategicMergePatch(current, patch, info.schema()) as ApiObject;
      } catch (err) {
        return patchFailure(err);
      }
    });
    sendJson(s.res, 200, renderObject(info, form, updated), s.warnings);
    return;
  }

  const applied = patch;
  if (!isPlainObject(applied)) throw badRequest('error decoding YAML: the apply configuration must be an object');
  const gv = groupVersion(info.group, info.version);
  if (applied.apiVersion !== gv || applied.kind !== info.kind) {
    throw badRequest(
      `apiVersion and kind in the applied configuration (${applied.apiVersion ?? ''}, ${applied.kind ?? ''}) must match the request (${gv}, ${info.kind})`,
    );
  }
  const bodyName = (applied.metadata as JsonObject | null | undefined)?.name;
  if (bodyName !== undefined && bodyName !== name) {
    throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  }
  const force = s.query.get('force') === 'true';
  const apply = (live: ApiObject | undefined) => {
    try {
      return patchModule.serverSideApply({
        live,
        applied,
        manager: opts.fieldManager,
        force,
        schema: info.schema(),
        subresource: route.subresource,
        resetFields: resetFields(info, route.subresource),
        now: timestamp(s.ctx.now()),
      }) as ApiObject;
    } catch (err) {
      if (err instanceof ApplyConflictError) throw applyConflictError(err);
      return patchFailure(err);
    }
  };
  const applyOpts = { ...opts, managedFieldsDone: true };
  try {
    const updated = await s.store.update(info, route.namespace, name, route.subresource, applyOpts, apply);
    sendJson(s.res, 200, renderObject(info, form, updated), s.warnings);
  } catch (err) {
    if (
      !(err instanceof ApiError && err.code === 404 && err.reason === 'NotFound' && err.details?.name === name) ||
      route.subresource
    )
      throw err;
    const obj = apply(undefined);
    obj.metadata ??= {} as ObjectMeta;
    const meta = obj.metadata;
    meta.name = name;
    const created = await s.store.create(info, route.namespace, obj, applyOpts);
    sendJson(s.res, 201, renderObject(info, form, created), s.warnings);
  }
}
