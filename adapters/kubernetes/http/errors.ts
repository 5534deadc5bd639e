/** A non-2xx answer from the apiserver, shaped so the existing retry code (numeric `code`) understands it. */

const BODY_LIMIT = 4096;

interface StatusLike {
  kind?: unknown;
  reason?: unknown;
  message?: unknown;
}

export class KubeApiError extends Error {
  override name = 'KubeApiError';
  /** HTTP status. */
  code: number;
  /** Status.reason, e.g. NotFound, AlreadyExists, Conflict, Forbidden. */
  reason?: string;
  /** The parsed Status JSON, or the response text, truncated to 4 KB. */
  body: unknown;
  method: string;
  /** Request path without its query string (query values may be secret). */
  path: string;

  constructor(method: string, path: string, code: number, responseText: string) {
    const text = responseText.length > BODY_LIMIT ? `${responseText.slice(0, BODY_LIMIT)}…` : responseText;
    const status = parseStatus(responseText);
    const reason = typeof status?.reason === 'string' && status.reason ? status.reason : undefined;
    const detail = typeof status?.message === 'string' ? status.message : text;
    const cleanPath = path.split('?', 1)[0] ?? path;
    super(`${method} ${cleanPath}: ${code} ${reason ?? ''}: ${detail}`);
    this.code = code;
    this.reason = reason;
    this.body = status ?? text;
    this.method = method;
    this.path = cleanPath;
  }
}

function parseStatus(text: string): StatusLike | undefined {
  if (!text || text.length > 1_000_000) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as StatusLike) : undefined;
  } catch {
    return undefined;
  }
}
