/**
 * User impersonation (`kubectl --as`, client-go's ImpersonationConfig), as kube-apiserver's impersonation
 * filter: the authenticated user must be allowed the `impersonate` verb on each requested user (or
 * service account), group, uid and extra; then the request runs as the impersonated user. This lets a
 * test drive code as a least-privilege identity through an admin kubeconfig.
 */
import type { IncomingMessage } from 'node:http';
import { type ApiError, badRequest } from '../server/errors.ts';
import { ANONYMOUS, AUTHENTICATED_GROUP, type Decision, type RequestAttributes, type UserInfo } from './types.ts';

const SA_PREFIX = 'system:serviceaccount:';

function headerValues(req: IncomingMessage, name: string): string[] {
  const v = req.headers[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function impersonate(resource: string, name: string, apiGroup = '', namespace = ''): RequestAttributes {
  return {
    resourceRequest: true,
    verb: 'impersonate',
    apiGroup,
    apiVersion: '',
    namespace,
    resource,
    subresource: '',
    name,
  };
}

/** The user a request acts as: `actor` itself, or whom it impersonates once every impersonation is allowed. */
export async function impersonatedUser(
  req: IncomingMessage,
  actor: UserInfo,
  authorize: (user: UserInfo, a: RequestAttributes) => Promise<Decision>,
  forbid: (user: UserInfo, a: RequestAttributes, reason: string) => ApiError,
): Promise<UserInfo> {
  const users = headerValues(req, 'impersonate-user');
  const groups = headerValues(req, 'impersonate-group');
  const uids = headerValues(req, 'impersonate-uid');
  const extras = Object.keys(req.headers).filter((h) => h.startsWith('impersonate-extra-'));
  const [name, ...otherUsers] = users;
  if (name === undefined) {
    if (groups.length || uids.length || extras.length) {
      throw badRequest(
        `requested [${[...groups.map((g) => `group ${g}`), ...uids.map((u) => `uid ${u}`)].join(' ')}] without impersonating a user`,
      );
    }
    return actor;
  }
  if (otherUsers.length > 0) throw badRequest('only one Impersonate-User header is allowed');
  const checks: RequestAttributes[] = [];
  let impliedGroups: string[] = [];
  if (name.startsWith(SA_PREFIX) && name.split(':').length === 4) {
    const [, , ns = '', sa = ''] = name.split(':');
    checks.push(impersonate('serviceaccounts', sa, '', ns));
    if (!groups.length) impliedGroups = ['system:serviceaccounts', `system:serviceaccounts:${ns}`];
  } else {
    checks.push(impersonate('users', name));
  }
  for (const g of groups) checks.push(impersonate('groups', g));
  for (const u of uids) checks.push(impersonate('uids', u, 'authentication.k8s.io'));
  for (const h of extras) {
    for (const v of headerValues(req, h))
      checks.push(
        impersonate(
          `userextras/${decodeURIComponent(h.slice('impersonate-extra-'.length))}`,
          v,
          'authentication.k8s.io',
        ),
      );
  }
  for (const a of checks) {
    const decision = await authorize(actor, a);
    if (!decision.allowed) throw forbid(actor, a, decision.reason);
  }
  const all = [...groups, ...impliedGroups];
  if (name === ANONYMOUS.name)
    return { name, groups: all.includes('system:unauthenticated') ? all : [...all, 'system:unauthenticated'] };
  return { name, groups: all.includes(AUTHENTICATED_GROUP) ? all : [...all, AUTHENTICATED_GROUP] };
}
