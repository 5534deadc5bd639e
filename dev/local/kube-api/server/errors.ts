/**
 * API errors and the metav1 Status bodies kube-apiserver sends for them. Messages follow
 * k8s.io/apimachinery/pkg/api/errors word for word, because clients (kubectl, client-go retry logic,
 * tests) match on them.
 */

import { qualifiedResource } from '../registry.ts';
import type { StatusCause } from '../schema/types.ts';

interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details?: StatusDetails;
  readonly headers?: Record<string, string>;
  constructor(
    code: number,
    reason: string,
    message: string,
    details?: StatusDetails,
    headers?: Record<string, string>,
  ) {
    // A 4xx is an answer to the client, not a fault of the server: nothing reads its stack, and capturing one
    // for each 404 of a first reconcile pass was ~1% of a cluster thread's CPU. A 5xx keeps its stack.
    const stackFrames = Error.stackTraceLimit;
    if (code < 500) Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = stackFrames;
    }
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.headers = headers;
  }

  status(): Record<string, unknown> {
    const body: Record<string, unknown> = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      // kube's StatusReasonUnknown is the empty string, and the JSON omits it.
      ...(this.reason ? { reason: this.reason } : {}),
    };
    if (this.details && Object.keys(this.details).length) body.details = this.details;
    body.code = this.code;
    return body;
  }
}

type GR = { group: string; resource: string };

function grDetails(gr: GR, name: string): StatusDetails {
  const d: StatusDetails = { name };
  if (gr.group) d.group = gr.group;
  d.kind = gr.resource;
  return d;
}

export function notFound(gr: GR, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, grDetails(gr, name));
}

export function alreadyExists(gr: GR, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, grDetails(gr, name));
}

export function conflict(gr: GR, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
    grDetails(gr, name),
  );
}

export const MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

export function staleConflict(gr: GR, name: string): ApiError {
  return conflict(gr, name, MODIFIED);
}

/** 422 Invalid: message and details name the Kind (`Deployment.apps`), not the resource, as NewInvalid does. */
export function invalid(kind: { group: string; kind: string }, name: string, causes: StatusCause[]): ApiError {
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const joined = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  const details: StatusDetails = { name };
  if (kind.group) details.group = kind.group;
  details.kind = kind.kind;
  details.causes = causes;
  const qualifiedKind = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, details);
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function forbidden(gr: GR, name: string, why: string, causes?: StatusCause[]): ApiError {
  const details = grDetails(gr, name);
  if (causes) details.causes = causes;
  return new ApiError(403, 'Forbidden', `${qualifiedResource(gr)} "${name}" is forbidden: ${why}`, details);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function notFoundPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got "${contentType}")`,
  );
}

/**
 * What kube answers for an error a REST storage returns without an API status (ErrorToAPIStatus's default):
 * 500, reason unknown (left out), the error's own text as the message.
 */
export function unknownError(message: string): ApiError {
  return new ApiError(500, '', message);
}

export function internalError(err: unknown): ApiError {
  const msg = err instanceof Error ? err.message : String(err);
  return new ApiError(500, 'InternalError', `Internal error occurred: ${msg}`, {
    causes: [{ reason: '', message: msg, field: '' }],
  });
}

export function tooManyRequests(retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    'TooManyRequests',
    'The system is too busy to handle the request, please try again later',
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

/** A field error, built like field.ErrorList entries. */
export function cause(reason: string, field: string, message: string): StatusCause {
  return { reason, message, field };
}
