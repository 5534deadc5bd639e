import { describe, expect, it } from 'vitest';
import { objectNameCauses, validateObjectName } from '../../../../../dev/local/kube-api/validation/names.ts';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

describe('validateObjectName', () => {
  it('uses DNS-1123 subdomains for most kinds and custom resources', () => {
    expect(validateObjectName('configmaps', 'app.config-1')).toEqual([]);
    expect(validateObjectName('pods', 'Bad_Name')).toEqual([SUBDOMAIN_MSG]);
    expect(validateObjectName('deployments.apps', 'x.')).toEqual([SUBDOMAIN_MSG]);
    expect(validateObjectName('nodepools.apps.openyurt.io', 'UPPER')).toEqual([SUBDOMAIN_MSG]);
    expect(validateObjectName('configmaps', 'a'.repeat(254))).toEqual(['must be no more than 253 characters']);
  });

  it('uses DNS-1123 labels for namespaces', () => {
    expect(validateObjectName('namespaces', 'team-a')).toEqual([]);
    expect(validateObjectName('namespaces', 'a.b')).toEqual(['must not contain dots']);
    expect(validateObjectName('namespaces', 'Team')).toEqual([LABEL_MSG]);
    expect(validateObjectName('namespaces', 'a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });

  it('uses DNS-1035 labels for services', () => {
    expect(validateObjectName('services', 'web')).toEqual([]);
    expect(validateObjectName('services', '1web')).toEqual([DNS1035_MSG]);
  });

  it('uses path-segment rules for RBAC kinds', () => {
    expect(validateObjectName('clusterroles', 'system:controller:Foo')).toEqual([]);
    expect(validateObjectName('roles.rbac.authorization.k8s.io', '..')).toEqual(["may not be '..'"]);
    expect(validateObjectName('rolebindings', 'a/b%c')).toEqual(["may not contain '/'", "may not contain '%'"]);
  });

  it('accepts a trailing dash on generateName prefixes only', () => {
    expect(validateObjectName('pods', 'web-', true)).toEqual([]);
    expect(validateObjectName('pods', 'web-')).toEqual([SUBDOMAIN_MSG]);
  });

  it('renders Status causes like kube-apiserver', () => {
    expect(objectNameCauses('pods', { name: 'Bad' })).toEqual([
      { reason: 'FieldValueInvalid', message: `Invalid value: "Bad": ${SUBDOMAIN_MSG}`, field: 'metadata.name' },
    ]);
    expect(objectNameCauses('pods', {})).toEqual([
      {
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
        field: 'metadata.name',
      },
    ]);
    expect(objectNameCauses('pods', { generateName: 'web-' })).toEqual([]);
  });
});
