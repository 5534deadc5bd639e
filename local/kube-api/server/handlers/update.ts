import { decodeObject, readBody } from '../body.ts';
import { badRequest } from '../errors.ts';
import { negotiate, sendJson } from '../respond.ts';
import { renderObject } from './render.ts';
import { writeOptions, type Scope } from './scope.ts';

/** PUT of the object, its status, or a namespace's finalize subresource. */
export async function handleUpdate(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, true);
  const opts = writeOptions(s, 'UpdateOptions');
  const body = decodeObject(await readBody(s.req), s.req.headers['content-type'], s.info);
  const name = s.route.name!;
  const bodyName = body.metadata?.name ?? '';
  if (bodyName !== name) throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  const updated = await s.store.update(s.info, s.route.namespace, name, s.route.subresource, opts, () => body);
  sendJson(s.res, 200, renderObject(s.info, form, updated), s.warnings);
}
