/**
 * LIST with label/field selectors and limit/continue pagination. The continue token carries the list's
 * revision and the last key returned, like kube-apiserver's, so every page reads the same snapshot; a
 * compacted snapshot is 410 Expired.
 */

import type { ResourceInfo } from '../../registry.ts';
import { CompactedError, type StoredObject } from '../../storage/types.ts';
import type { ApiContext } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { type ApiObject, present } from '../objects.ts';
import { negotiate, sendJson } from '../respond.ts';
import { renderList } from './render.ts';
import type { Scope } from './scope.ts';
import { type ObjectFilter, selectionFilter } from './selection.ts';

interface ContinueToken {
  v: 'meta.k8s.io/v1';
  rv: number;
  /** Last key returned, relative to the list prefix. */
  start: string;
}

export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start } satisfies ContinueToken)).toString('base64url');
}

function decodeContinue(token: string): ContinueToken {
  let parsed: ContinueToken;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data or JSON');
  }
  if (parsed?.v !== 'meta.k8s.io/v1')
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (!Number.isInteger(parsed.rv) || parsed.rv <= 0)
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof parsed.start !== 'string' || parsed.start.includes('..') || parsed.start.startsWith('/')) {
    throw badRequest('continue key is not valid: key provided is not in the expected form');
  }
  return parsed;
}

export function parseLimit(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw badRequest(`limit: Invalid value: ${JSON.stringify(raw)}: must be an integer`);
  return Math.max(n, 0);
}

export interface ListPage {
  items: ApiObject[];
  revision: number;
  continueToken?: string;
  /** Objects after this page; known for unfiltered lists only, as in kube. */
  remainingItemCount?: number;
}

/** Reads one page: `limit` matching items from `prefix`, after the token's key, at the token's revision. */
export async function readPage(
  ctx: ApiContext,
  info: ResourceInfo,
  prefix: string,
  filter: ObjectFilter,
  limit: number,
  token: ContinueToken | undefined,
  atRevision: number | undefined,
): Promise<ListPage> {
  let startAfterKey = token ? prefix + token.start : undefined;
  const rev = token?.rv ?? atRevision;
  const items: ApiObject[] = [];
  const take = (s: StoredObject) => present(info, s.value as ApiObject, s.modRevision);
  try {
    if (!filter) {
      const res = await ctx.storage.list(prefix, { limit, startAfterKey, atRevision: rev });
      for (const s of res.items) items.push(take(s));
      const last = res.items[res.items.length - 1];
      const cont = res.more && last ? encodeContinue(res.revision, last.key.slice(prefix.length)) : undefined;
      return {
        items,
        revision: res.revision,
        continueToken: cont,
        ...(cont ? { remainingItemCount: res.remaining } : {}),
      };
    }
    const labelHint = filter.labels;
    if (!limit) {
      const res = await ctx.storage.list(prefix, { startAfterKey, atRevision: rev, labelHint });
      for (const s of res.items) {
        const obj = take(s);
        if (filter(obj)) items.push(obj);
      }
      return { items, revision: res.revision };
    }
    // Filtered and limited: read chunks at one revision until the page is full.
    let revision = rev;
    const chunk = Math.max(limit * 2, 100);
    for (;;) {
      const res = await ctx.storage.list(prefix, { limit: chunk, startAfterKey, atRevision: revision, labelHint });
      revision = res.revision;
      for (let i = 0; i < res.items.length; i++) {
        const stored = res.items[i];
        if (stored === undefined) continue; // i < items.length
        const obj = take(stored);
        if (!filter(obj)) continue;
        items.push(obj);
        if (items.length === limit) {
          const more = i < res.items.length - 1 || res.more;
          const cont = more ? encodeContinue(revision, stored.key.slice(prefix.length)) : undefined;
          return { items, revision, continueToken: cont };
        }
      }
      const last = res.items.at(-1);
      if (!res.more || last === undefined) return { items, revision };
      startAfterKey = last.key;
    }
  } catch (err) {
    if (err instanceof CompactedError) {
      if (token) {
        throw new ApiError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
      }
      throw new ApiError(410, 'Expired', `The resourceVersion for the provided list is too old.`);
    }
    throw err;
  }
}

export function listPrefixFor(info: ResourceInfo, namespace: string | undefined): string {
  return info.namespaced && namespace ? `${info.keyPrefix}/${namespace}/` : `${info.keyPrefix}/`;
}

/** resourceVersion + resourceVersionMatch=Exact reads at that revision; anything else reads the latest. */
export function exactRevision(query: URLSearchParams): number | undefined {
  const rv = query.get('resourceVersion');
  const match = query.get('resourceVersionMatch');
  if (match && match !== 'Exact' && match !== 'NotOlderThan') {
    throw badRequest(
      `resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`,
    );
  }
  if (match && !rv)
    throw badRequest(
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
  if (rv && rv !== '0' && !/^\d+$/.test(rv))
    throw badRequest(`resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be an integer`);
  if (match === 'Exact' && rv && rv !== '0') return Number(rv);
  return undefined;
}

export async function handleList(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, true);
  const filter = selectionFilter(s.info, s.query);
  const limit = parseLimit(s.query);
  const contText = s.query.get('continue');
  const token = contText ? decodeContinue(contText) : undefined;
  const prefix = listPrefixFor(s.info, s.route.namespace);
  const page = await readPage(s.ctx, s.info, prefix, filter, limit, token, exactRevision(s.query));
  sendJson(
    s.res,
    200,
    renderList(s.info, form, page.items, String(page.revision), page.continueToken, page.remainingItemCount),
  );
}
