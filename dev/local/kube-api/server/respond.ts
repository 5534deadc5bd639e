/** Writing responses, and content negotiation on the Accept header (JSON, Table, PartialObjectMetadata). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './errors.ts';

export type OutputForm =
  | { form: 'object' }
  | { form: 'table'; includeObject: 'None' | 'Metadata' | 'Object' }
  | { form: 'partial' };

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [{ type: '*/*', params: {} }];
  return header.split(',').map((part) => {
    const [type = '', ...rest] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim();
    }
    return { type: type.toLowerCase(), params };
  });
}

/**
 * Picks the first Accept entry the server can produce, as kube does: JSON (or YAML/any, answered in
 * JSON), meta.k8s.io/v1 Table, or PartialObjectMetadata; protobuf-only clients get 406.
 */
export function negotiate(req: IncomingMessage, query: URLSearchParams, allowTable: boolean): OutputForm {
  for (const m of parseAccept(req.headers.accept)) {
    const json = m.type === 'application/json' || m.type === '*/*' || m.type === 'application/*';
    if (!json && m.type !== 'application/yaml') continue;
    const as = m.params.as;
    if (!as) return { form: 'object' };
    if (m.params.g !== 'meta.k8s.io' || m.params.v !== 'v1') continue;
    if (as === 'Table' && allowTable) {
      const inc = query.get('includeObject');
      const includeObject = inc === 'None' || inc === 'Object' ? inc : 'Metadata';
      return { form: 'table', includeObject };
    }
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { form: 'partial' };
  }
  throw new ApiError(
    406,
    'NotAcceptable',
    'only the following media types are accepted: application/json, application/yaml',
  );
}

export function warningHeader(warnings: string[]): string[] {
  return [...new Set(warnings)].map((w) => `299 - ${JSON.stringify(w)}`);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  warnings?: string[],
  extraHeaders?: Record<string, string>,
): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | string[] | number> = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  };
  if (warnings?.length) headers.Warning = warningHeader(warnings);
  if (extraHeaders) Object.assign(headers, extraHeaders);
  res.writeHead(status, headers);
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError, warnings?: string[]): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.code, err.status(), warnings, err.headers);
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}
