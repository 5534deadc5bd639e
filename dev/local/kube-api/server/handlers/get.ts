import { negotiate, sendJson } from '../respond.ts';
import { renderObject } from './render.ts';
import type { Scope } from './scope.ts';

export async function handleGet(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, true);
  const obj = await s.store.mustGet(s.info, s.route.namespace, s.route.name!);
  sendJson(s.res, 200, renderObject(s.info, form, obj));
}
