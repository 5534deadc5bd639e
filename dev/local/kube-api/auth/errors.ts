/** The 401 and 403 Status bodies kube-apiserver sends, word for word (responsewriters.forbiddenMessage). */
import { ApiError } from '../server/errors.ts';
import type { RequestAttributes, UserInfo } from './types.ts';

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function forbiddenMessage(user: UserInfo, a: RequestAttributes): string {
  if (!a.resourceRequest) return `User ${JSON.stringify(user.name)} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const where = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${JSON.stringify(user.name)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${where}`;
}

/** apierrors.NewForbidden: `<resource.group> "<name>" is forbidden: ...`, without the name part when there is none. */
export function forbiddenRequest(user: UserInfo, a: RequestAttributes, reason: string): ApiError {
  const why = reason ? `${forbiddenMessage(user, a)}: ${reason}` : forbiddenMessage(user, a);
  if (!a.resourceRequest) return new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
  const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
  const subject = a.name ? `${qualified} ${JSON.stringify(a.name)}` : qualified;
  const details: Record<string, string> = {};
  if (a.name) details.name = a.name;
  if (a.apiGroup) details.group = a.apiGroup;
  details.kind = a.resource;
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, details);
}
