/** Rule matching and request attributes, checked against kube's evaluation helpers case by case. */
import { describe, expect, it } from 'vitest';
import { requestAttributes } from '../../../../../dev/local/kube-api/auth/attributes.ts';
import { ruleAllows, subjectMatches } from '../../../../../dev/local/kube-api/auth/rbac-rules.ts';
import type { RequestAttributes } from '../../../../../dev/local/kube-api/auth/types.ts';
import { parseRoute } from '../../../../../dev/local/kube-api/server/routes.ts';

const res = (
  verb: string,
  resource: string,
  extra: Partial<Extract<RequestAttributes, { resourceRequest: true }>> = {},
): RequestAttributes => ({
  resourceRequest: true,
  verb,
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'ns',
  resource,
  subresource: '',
  name: '',
  ...extra,
});
const path = (verb: string, p: string): RequestAttributes => ({ resourceRequest: false, verb, path: p });

function attrs(method: string, url: string): RequestAttributes {
  const u = new URL(url, 'http://x');
  return requestAttributes(method, u.pathname, parseRoute(method, u.pathname, u.searchParams), u.searchParams);
}

describe('ruleAllows', () => {
  it('matches verbs, groups and resources, with * wildcards', () => {
    expect(ruleAllows(res('get', 'pods'), { verbs: ['get'], apiGroups: [''], resources: ['pods'] })).toBe(true);
    expect(ruleAllows(res('list', 'pods'), { verbs: ['get'], apiGroups: [''], resources: ['pods'] })).toBe(false);
    expect(ruleAllows(res('get', 'pods'), { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] })).toBe(false);
    expect(
      ruleAllows(res('get', 'deployments', { apiGroup: 'apps' }), { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }),
    ).toBe(true);
    expect(ruleAllows(res('get', 'pods'), { verbs: ['get'], resources: ['pods'] })).toBe(false);
  });

  it('treats subresources as their own resource, except */sub and *', () => {
    const status = res('update', 'pods', { subresource: 'status' });
    expect(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['pods'] })).toBe(false);
    expect(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['pods/status'] })).toBe(true);
    expect(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['*/status'] })).toBe(true);
    expect(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['*/scale'] })).toBe(false);
    expect(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['pods/*'] })).toBe(false);
    expect(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['*'] })).toBe(true);
  });

  it('restricts by resourceNames only when the request names an object', () => {
    const rule = { verbs: ['get', 'create'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] };
    expect(ruleAllows(res('get', 'configmaps', { name: 'a' }), rule)).toBe(true);
    expect(ruleAllows(res('get', 'configmaps', { name: 'b' }), rule)).toBe(false);
    expect(ruleAllows(res('create', 'configmaps'), rule)).toBe(false);
  });

  it('matches non-resource URLs exactly or by a trailing * prefix, never resource requests', () => {
    const rule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    expect(ruleAllows(path('get', '/healthz'), rule)).toBe(true);
    expect(ruleAllows(path('get', '/healthz/etcd'), rule)).toBe(false);
    expect(ruleAllows(path('get', '/apis/apps/v1'), rule)).toBe(true);
    expect(ruleAllows(path('post', '/healthz'), rule)).toBe(false);
    expect(ruleAllows(res('get', 'pods'), { verbs: ['*'], nonResourceURLs: ['*'] })).toBe(false);
    expect(ruleAllows(path('get', '/metrics'), { verbs: ['*'], apiGroups: ['*'], resources: ['*'] })).toBe(false);
  });
});

describe('subjectMatches', () => {
  const u = { name: 'system:serviceaccount:ns:sa', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'] };
  it('matches users, groups and service accounts (defaulting to the binding namespace)', () => {
    expect(subjectMatches(u, { kind: 'User', name: 'system:serviceaccount:ns:sa' }, '')).toBe(true);
    expect(subjectMatches(u, { kind: 'Group', name: 'system:serviceaccounts:ns' }, '')).toBe(true);
    expect(subjectMatches(u, { kind: 'ServiceAccount', name: 'sa' }, 'ns')).toBe(true);
    expect(subjectMatches(u, { kind: 'ServiceAccount', name: 'sa' }, '')).toBe(false);
    expect(subjectMatches(u, { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }, '')).toBe(true);
    expect(subjectMatches(u, { kind: 'ServiceAccount', name: 'sa', namespace: 'other' }, 'ns')).toBe(false);
    expect(subjectMatches(u, { kind: 'Robot', name: 'sa' }, 'ns')).toBe(false);
  });
});

describe('requestAttributes', () => {
  it('maps HTTP to kube verbs', () => {
    expect(attrs('GET', '/api/v1/namespaces/a/pods')).toMatchObject({
      verb: 'list',
      namespace: 'a',
      resource: 'pods',
      name: '',
    });
    expect(attrs('GET', '/api/v1/namespaces/a/pods?watch=true')).toMatchObject({ verb: 'watch' });
    expect(attrs('GET', '/api/v1/namespaces/a/pods/p')).toMatchObject({ verb: 'get', name: 'p' });
    expect(attrs('POST', '/api/v1/namespaces/a/pods')).toMatchObject({ verb: 'create', name: '' });
    expect(attrs('PUT', '/api/v1/namespaces/a/pods/p/status')).toMatchObject({ verb: 'update', subresource: 'status' });
    expect(attrs('PATCH', '/apis/apps/v1/namespaces/a/deployments/d/scale')).toMatchObject({
      verb: 'patch',
      apiGroup: 'apps',
      resource: 'deployments',
      subresource: 'scale',
    });
    expect(attrs('DELETE', '/api/v1/namespaces/a/pods/p')).toMatchObject({ verb: 'delete' });
    expect(attrs('DELETE', '/api/v1/namespaces/a/pods')).toMatchObject({ verb: 'deletecollection' });
    expect(attrs('GET', '/api/v1/nodes')).toMatchObject({ verb: 'list', namespace: '', resource: 'nodes' });
  });

  it('puts a namespace object in its own namespace', () => {
    expect(attrs('GET', '/api/v1/namespaces/a')).toMatchObject({
      verb: 'get',
      namespace: 'a',
      resource: 'namespaces',
      name: 'a',
    });
    expect(attrs('PUT', '/api/v1/namespaces/a/finalize')).toMatchObject({
      namespace: 'a',
      name: 'a',
      subresource: 'finalize',
    });
    expect(attrs('GET', '/api/v1/namespaces')).toMatchObject({ verb: 'list', namespace: '', name: '' });
  });

  it('takes the name of a list or watch from a metadata.name field selector', () => {
    expect(attrs('GET', '/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dx')).toMatchObject({
      verb: 'list',
      name: 'x',
    });
    expect(attrs('GET', '/api/v1/namespaces/a/configmaps?watch=1&fieldSelector=metadata.name%3D%3Dx')).toMatchObject({
      verb: 'watch',
      name: 'x',
    });
    expect(attrs('GET', '/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name!%3Dx')).toMatchObject({
      name: '',
    });
    expect(attrs('GET', '/api/v1/namespaces/a/configmaps?fieldSelector=metadata.namespace%3Dx')).toMatchObject({
      name: '',
    });
  });

  it('treats discovery and other paths as non-resource requests with the method as verb', () => {
    expect(attrs('GET', '/apis/apps/v1')).toEqual({ resourceRequest: false, verb: 'get', path: '/apis/apps/v1' });
    expect(attrs('GET', '/api')).toEqual({ resourceRequest: false, verb: 'get', path: '/api' });
    expect(attrs('POST', '/healthz')).toEqual({ resourceRequest: false, verb: 'post', path: '/healthz' });
  });
});
