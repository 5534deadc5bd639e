import type { ResourceInfo } from '../../registry.ts';
import { decodeObject, readBody } from '../body.ts';
import { badRequest, cause, invalid } from '../errors.ts';
import { negotiate, sendJson } from '../respond.ts';
import { renderObject } from './render.ts';
import { type Scope, writeOptions } from './scope.ts';

/** PUT of the object, its status, or a namespace's finalize subresource. */
export async function handleUpdate(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, true);
  const opts = writeOptions(s, 'UpdateOptions');
  const raw = await readBody(s.req);
  const decode = () => decodeObject(raw, s.req.headers['content-type'], s.info);
  const body = decode();
  const name = s.route.name!;
  const bodyName = body.metadata?.name ?? '';
  if (bodyName !== name)
    throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  if (!body.metadata?.resourceVersion && requiresResourceVersion(s.info)) {
    // kube's Store.Update names the resource (not the kind) here.
    throw invalid({ group: s.info.group, kind: s.info.resource }, name, [
      cause('FieldValueInvalid', 'metadata.resourceVersion', 'Invalid value: 0x0: must be specified for an update'),
    ]);
  }
  const updated = await s.store.update(s.info, s.route.namespace, name, s.route.subresource, opts, {
    replacement: body,
    again: decode,
  });
  sendJson(s.res, 200, renderObject(s.info, form, updated), s.warnings);
}

/** Custom resources and CRDs refuse unconditional updates (their strategies' AllowUnconditionalUpdate is false). */
function requiresResourceVersion(info: ResourceInfo): boolean {
  return info.custom || (info.group === 'apiextensions.k8s.io' && info.resource === 'customresourcedefinitions');
}
