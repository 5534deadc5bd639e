/**
 * The HTTP front: node:http, no framework. Parses the route, applies fault injection, dispatches to the
 * verb handlers or discovery/OpenAPI/health endpoints, turns errors into Status bodies, and records every
 * request in the RequestLog.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isCoreResource } from '../registry.ts';
import { TableError } from '../table.ts';
import type { ApiContext } from './context.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, VERSION_INFO } from './discovery.ts';
import {
  ApiError,
  badRequest,
  conflict,
  internalError,
  MODIFIED,
  methodNotAllowed,
  notFoundPath,
  tooManyRequests,
} from './errors.ts';
import { handleBinding } from './handlers/binding.ts';
import { handleCreate } from './handlers/create.ts';
import { handleDelete, handleDeleteCollection } from './handlers/delete.ts';
import { handleGet } from './handlers/get.ts';
import { handleList } from './handlers/list.ts';
import { handlePatch } from './handlers/patch.ts';
import { handleScale } from './handlers/scale.ts';
import type { Handler, Scope } from './handlers/scope.ts';
import { handleUpdate } from './handlers/update.ts';
import { handleWatch } from './handlers/watch.ts';
import { serveOpenApi } from './openapi.ts';
import type { RequestRecord } from './request-log.ts';
import { sendError, sendJson, sendText } from './respond.ts';
import { parseRoute, type ResourceRequest } from './routes.ts';
import type { ObjectStore } from './store.ts';

const HANDLERS: Record<string, Handler> = {
  get: handleGet,
  list: handleList,
  watch: handleWatch,
  create: handleCreate,
  update: handleUpdate,
  patch: handlePatch,
  delete: handleDelete,
  deletecollection: handleDeleteCollection,
};

/** Verbs allowed on subresources; everything else there is 405/404. */
const STATUS_VERBS = new Set(['get', 'update', 'patch']);

export function createApiServer(ctx: ApiContext, store: ObjectStore): Server {
  const server = createServer((req, res) => {
    void handle(ctx, store, req, res);
  });
  server.keepAliveTimeout = 65_000;
  // Watches are long-lived; node's default request timeout would cut them.
  server.requestTimeout = 0;
  return server;
}

async function handle(ctx: ApiContext, store: ObjectStore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = Date.now();
  const url = new URL(req.url ?? '/', 'http://local');
  const method = req.method ?? 'GET';
  const route = parseRoute(method, url.pathname, url.searchParams);
  const record: RequestRecord = {
    verb: route.verb,
    method,
    path: url.pathname,
    status: 0,
    userAgent: String(req.headers['user-agent'] ?? ''),
    at: started,
  };
  if (route.type === 'resource') {
    record.resource = route.resource;
    record.group = route.group;
    record.namespace = route.namespace;
    record.name = route.name;
    record.subresource = route.subresource;
  }
  res.on('finish', () => {
    record.status = res.statusCode;
  });
  ctx.requestLog.add(record);
  const warnings: string[] = [];
  try {
    let dropWatchAfterMs: number | undefined;
    if (route.type === 'resource') {
      const fault = ctx.faults.decide(
        route.verb,
        route.subresource ? `${route.resource}/${route.subresource}` : route.resource,
      );
      if (fault.delayMs > 0) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.failStatus === 409)
        throw conflict(
          { group: route.group ?? '', resource: route.resource },
          route.name ?? '',
          `injected fault: ${MODIFIED}`,
        );
      if (fault.failStatus === 429) throw tooManyRequests(1);
      if (fault.failStatus === 500) throw internalError(new Error('injected fault'));
      dropWatchAfterMs = fault.dropWatchAfterMs;
    }
    if (route.type === 'nonResource') {
      await serveNonResource(ctx, req, res, url);
    } else if (route.type === 'discovery') {
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
      const body =
        route.path === 'api'
          ? apiVersions(req)
          : route.path === 'apis'
            ? apiGroupList(ctx.registry)
            : route.path === 'group'
              ? apiGroup(ctx.registry, route.group)
              : apiResourceList(ctx.registry, route.group, route.version!);
      if (body === undefined) throw notFoundPath();
      sendJson(res, 200, body);
    } else {
      await serveResource(ctx, store, req, res, url, route, record, warnings, dropWatchAfterMs);
    }
  } catch (err) {
    const apiErr = toApiError(err);
    if (apiErr.code >= 500 && !(err instanceof ApiError))
      console.error(`local kube-api ${ctx.name}: ${method} ${url.pathname}:`, err);
    sendError(res, apiErr, warnings);
  } finally {
    record.status = res.statusCode;
  }
}

async function serveResource(
  ctx: ApiContext,
  store: ObjectStore,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: ResourceRequest,
  record: RequestRecord,
  warnings: string[],
  dropWatchAfterMs: number | undefined,
): Promise<void> {
  const info = ctx.registry.get(route.group, route.version, route.resource);
  if (!info) throw notFoundPath();
  const scope: Scope = {
    ctx,
    store,
    req,
    res,
    query: url.searchParams,
    route,
    info,
    record,
    warnings,
    dropWatchAfterMs,
  };
  // Scope checks: a namespaced resource needs a namespace for single objects and creates; a
  // cluster-scoped one never has one.
  if (!info.namespaced && route.namespace !== undefined) throw notFoundPath();
  if (info.namespaced && route.namespace === undefined) {
    if (route.verb === 'create') throw methodNotAllowed();
    if (route.name !== undefined) throw notFoundPath();
  }
  if (route.subresource === 'binding' && isCoreResource(info, 'pods')) {
    if (route.verb !== 'create' || route.name === undefined) throw methodNotAllowed();
    await handleBinding(scope);
    return;
  }
  if (route.subresource !== undefined) {
    const known =
      (route.subresource === 'status' && info.subresources.status) ||
      (route.subresource === 'scale' && info.subresources.scale !== undefined) ||
      (route.subresource === 'finalize' &&
        !info.custom &&
        info.group === '' &&
        info.resource === 'namespaces' &&
        route.verb === 'update');
    if (!known) throw notFoundPath();
    if (!STATUS_VERBS.has(route.verb)) throw methodNotAllowed();
  }
  if (!info.verbs.includes(route.verb) && !(route.subresource && STATUS_VERBS.has(route.verb)))
    throw methodNotAllowed();
  const handler = route.subresource === 'scale' ? handleScale : HANDLERS[route.verb];
  if (!handler) throw methodNotAllowed();
  await handler(scope);
}

async function serveNonResource(ctx: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const path = url.pathname;
  if (path === '/version' || path === '/version/') {
    sendJson(res, 200, VERSION_INFO);
    return;
  }
  if (/^\/(healthz|readyz|livez)(\/.*)?$/.test(path)) {
    sendText(res, 200, 'ok');
    return;
  }
  if (path.startsWith('/openapi/')) {
    await serveOpenApi(ctx, req, res, url);
    return;
  }
  throw notFoundPath();
}

/** Errors from peer modules that carry an HTTP status (Table printing) map to their Status; others are 500s. */
function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof TableError) return err.status === 400 ? badRequest(err.message) : internalError(err);
  return internalError(err);
}
