/**
 * /openapi/v3 (index) and /openapi/v3/<api|apis/group>/<version> documents, built by the schema module
 * from the registry and cached until the registry changes. /openapi/v2 is 404, so kubectl uses v3.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { groupVersion } from '../registry.ts';
import type { ApiContext } from './context.ts';
import { notFoundPath } from './errors.ts';
import { schemaModule } from './peers.ts';
import { sendJson } from './respond.ts';

interface Cache {
  index?: unknown;
  docs: Map<string, unknown>;
}
const caches = new WeakMap<ApiContext, Cache>();

function cacheFor(ctx: ApiContext): Cache {
  let c = caches.get(ctx);
  if (!c) {
    const created: Cache = { docs: new Map() };
    caches.set(ctx, created);
    ctx.registry.onChange(() => {
      created.index = undefined;
      created.docs.clear();
    });
    c = created;
  }
  return c;
}

export async function serveOpenApi(
  ctx: ApiContext,
  _req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '/openapi/v3') {
    const cache = cacheFor(ctx);
    if (!cache.index) {
      // Hashes in the index come from the documents, so kubectl's cache notices a changed CRD schema.
      const gvs = [...new Set(ctx.registry.all().map((i) => groupVersion(i.group, i.version)))];
      const documents: Record<string, unknown> = {};
      for (const gv of gvs) documents[gv] = documentFor(ctx, cache, gv);
      cache.index = schemaModule.openApiV3Index(gvs, documents);
    }
    sendJson(res, 200, cache.index);
    return;
  }
  const m = /^\/openapi\/v3\/(api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m) throw notFoundPath();
  // /api/<version> sets group 2; /apis/<group>/<version> sets groups 3 and 4.
  const group = m[2] ? '' : (m[3] ?? '');
  const version = m[2] ?? m[4] ?? '';
  const resources = ctx.registry.inGroupVersion(group, version);
  if (!resources.length) throw notFoundPath();
  const doc = documentFor(ctx, cacheFor(ctx), groupVersion(group, version));
  sendJson(res, 200, doc);
}

function documentFor(ctx: ApiContext, cache: Cache, gv: string): unknown {
  let doc = cache.docs.get(gv);
  if (!doc) {
    const resources = ctx.registry
      .all()
      .filter((i) => groupVersion(i.group, i.version) === gv)
      .map((i) => ({ ...i, subresources: { status: i.subresources.status, scale: Boolean(i.subresources.scale) } }));
    doc = schemaModule.openApiV3Document(gv, resources);
    cache.docs.set(gv, doc);
  }
  return doc;
}
