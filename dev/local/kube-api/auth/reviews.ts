/**
 * The two self-review APIs clients use to ask about themselves: authorization.k8s.io/v1
 * SelfSubjectAccessReview (`kubectl auth can-i`) and authentication.k8s.io/v1 SelfSubjectReview
 * (`kubectl auth whoami`). Both are create-only and stored nowhere, so they are not registry resources.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyFormat, mediaType, PROTOBUF, parseText, readBody } from '../server/body.ts';
import { ApiError, badRequest } from '../server/errors.ts';
import { isPlainObject, type JsonObject } from '../server/objects.ts';
import { sendJson } from '../server/respond.ts';
import type { ResourceRequest } from '../server/routes.ts';
import { decodeReviewSpec } from './review-protobuf.ts';
import type { Decision, RequestAttributes, UserInfo } from './types.ts';

type Authorize = (user: UserInfo, a: RequestAttributes) => Promise<Decision>;

export function isReviewRequest(route: ResourceRequest): boolean {
  return (
    route.version === 'v1' &&
    ((route.group === 'authorization.k8s.io' && route.resource === 'selfsubjectaccessreviews') ||
      (route.group === 'authentication.k8s.io' && route.resource === 'selfsubjectreviews'))
  );
}

export async function serveReview(
  req: IncomingMessage,
  res: ServerResponse,
  route: ResourceRequest,
  user: UserInfo,
  authorize: Authorize,
): Promise<void> {
  if (route.verb !== 'create' || route.name !== undefined || route.namespace !== undefined) {
    sendJson(res, 405, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server does not allow this method on the requested resource',
      reason: 'MethodNotAllowed',
      code: 405,
    });
    return;
  }
  const raw = await readBody(req);
  if (route.resource === 'selfsubjectreviews') {
    // The review has no input: the answer is the caller itself.
    sendJson(res, 201, {
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      status: { userInfo: { username: user.name, groups: user.groups } },
    });
    return;
  }
  const spec = decodeSpec(raw, req.headers['content-type']);
  const decision = await authorize(user, reviewAttributes(spec));
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.allowed && typeof decision.by === 'object') {
    status.reason = `RBAC: allowed by ${decision.binding} of ${decision.by.kind} "${decision.by.name}"`;
  } else if (!decision.allowed && decision.reason) {
    status.reason = decision.reason;
  }
  sendJson(res, 201, {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status,
  });
}

function decodeSpec(raw: Buffer, contentType: string | undefined): JsonObject {
  try {
    if (mediaType(contentType) === PROTOBUF) return decodeReviewSpec(raw);
    const body = parseText(raw, bodyFormat(contentType));
    if (!isPlainObject(body))
      throw badRequest(
        'the object provided is unrecognized (must be of type SelfSubjectAccessReview): expected an object',
      );
    return isPlainObject(body.spec) ? body.spec : {};
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // Malformed JSON, YAML or protobuf: the client's fault, as kube's decoder reports it.
    throw badRequest(
      `the object provided is unrecognized (must be of type SelfSubjectAccessReview): ${(err as Error).message}`,
    );
  }
}

function reviewAttributes(spec: JsonObject): RequestAttributes {
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  if (isPlainObject(r) === isPlainObject(n)) {
    throw badRequest(
      'SelfSubjectAccessReview.authorization.k8s.io is invalid: spec: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  }
  if (isPlainObject(n)) return { resourceRequest: false, verb: String(n.verb ?? ''), path: String(n.path ?? '') };
  const attrs = r as JsonObject; // exactly one of the two is an object, and it is not n
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    resourceRequest: true,
    verb: str(attrs.verb),
    apiGroup: str(attrs.group),
    apiVersion: str(attrs.version),
    namespace: str(attrs.namespace),
    resource: str(attrs.resource),
    subresource: str(attrs.subresource),
    name: str(attrs.name),
  };
}
