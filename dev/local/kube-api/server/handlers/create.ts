import { decodeObject, readBody } from '../body.ts';
import { negotiate, sendJson } from '../respond.ts';
import { renderObject } from './render.ts';
import { type Scope, writeOptions } from './scope.ts';

export async function handleCreate(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, true);
  const opts = writeOptions(s, 'CreateOptions');
  const body = decodeObject(await readBody(s.req), s.req.headers['content-type'], s.info);
  const created = await s.store.create(s.info, s.route.namespace, body, opts);
  sendJson(s.res, 201, renderObject(s.info, form, created), s.warnings);
}
