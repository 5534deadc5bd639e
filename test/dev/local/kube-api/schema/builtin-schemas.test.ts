import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtinSchema, isBuiltinSchema } from '../../../../../dev/local/kube-api/schema/index.ts';
import type { SchemaNode } from '../../../../../dev/local/kube-api/schema/types.ts';
import { BUILTIN_SCHEMAS_FILE, renderBuiltinSchemas } from '../../../../../scripts/generate-builtin-schemas.ts';

function at(root: SchemaNode | undefined, path: string): SchemaNode {
  let node = root;
  for (const part of path.split('.')) {
    if (!node) break;
    node =
      part === '[]' ? node.items : part === '{}' ? (node.additionalProperties as SchemaNode) : node.properties?.[part];
  }
  if (!node) throw new Error(`no schema at ${path}`);
  return node;
}

const podSpec = () => at(builtinSchema('apps', 'v1', 'Deployment'), 'spec.template.spec');

describe('generated built-in schemas', () => {
  it('match what the generator produces from kubernetes-types (drift check)', () => {
    expect(renderBuiltinSchemas()).toBe(readFileSync(BUILTIN_SCHEMAS_FILE, 'utf8'));
  });

  it('exist for every served built-in kind and nothing else', () => {
    const kinds: Array<[string, string, string]> = [
      ['', 'v1', 'Namespace'],
      ['', 'v1', 'Node'],
      ['', 'v1', 'Pod'],
      ['', 'v1', 'Service'],
      ['', 'v1', 'Secret'],
      ['', 'v1', 'ConfigMap'],
      ['', 'v1', 'ServiceAccount'],
      ['', 'v1', 'Event'],
      ['apps', 'v1', 'Deployment'],
      ['rbac.authorization.k8s.io', 'v1', 'Role'],
      ['rbac.authorization.k8s.io', 'v1', 'RoleBinding'],
      ['rbac.authorization.k8s.io', 'v1', 'ClusterRole'],
      ['rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding'],
      ['coordination.k8s.io', 'v1', 'Lease'],
      ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition'],
      ['meta.k8s.io', 'v1', 'Status'],
      ['meta.k8s.io', 'v1', 'DeleteOptions'],
      ['meta.k8s.io', 'v1', 'ObjectMeta'],
    ];
    for (const [g, v, k] of kinds) {
      const s = builtinSchema(g, v, k);
      expect(s?.type, `${g}/${v} ${k}`).toBe('object');
      expect(isBuiltinSchema(s!)).toBe(true);
    }
    expect(builtinSchema('apps', 'v1', 'StatefulSet')).toBeUndefined();
    expect(builtinSchema('', 'v2', 'Pod')).toBeUndefined();
  });

  it('carry the strategic-merge and list-map facts of the upstream struct tags', () => {
    expect(at(podSpec(), 'containers')).toMatchObject({
      type: 'array',
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    });
    expect(at(podSpec(), 'containers.[].ports')).toMatchObject({
      'x-kubernetes-patch-merge-key': 'containerPort',
      'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
    });
    expect(at(podSpec(), 'containers.[].env')['x-kubernetes-patch-merge-key']).toBe('name');
    expect(at(podSpec(), 'initContainers.[].volumeMounts')['x-kubernetes-patch-merge-key']).toBe('mountPath');
    expect(at(podSpec(), 'volumes')['x-kubernetes-patch-strategy']).toBe('merge,retainKeys');
    expect(at(podSpec(), 'tolerations')['x-kubernetes-list-type']).toBe('atomic');
    expect(at(podSpec(), 'tolerations')['x-kubernetes-patch-strategy']).toBeUndefined();
    expect(at(podSpec(), 'nodeSelector')['x-kubernetes-map-type']).toBe('atomic');

    const meta = builtinSchema('meta.k8s.io', 'v1', 'ObjectMeta');
    expect(at(meta, 'finalizers')).toMatchObject({
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    });
    expect(at(meta, 'ownerReferences')).toMatchObject({
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-list-map-keys': ['uid'],
    });
    expect(at(meta, 'ownerReferences.[]')['x-kubernetes-map-type']).toBe('atomic');

    expect(at(builtinSchema('apps', 'v1', 'Deployment'), 'status.conditions')['x-kubernetes-patch-merge-key']).toBe(
      'type',
    );
    expect(at(builtinSchema('', 'v1', 'Pod'), 'status.podIPs')['x-kubernetes-patch-merge-key']).toBe('ip');
    expect(at(builtinSchema('', 'v1', 'Service'), 'spec.ports')['x-kubernetes-list-map-keys']).toEqual([
      'port',
      'protocol',
    ]);
    expect(at(builtinSchema('', 'v1', 'Node'), 'status.addresses')['x-kubernetes-patch-merge-key']).toBe('type');
    expect(at(builtinSchema('rbac.authorization.k8s.io', 'v1', 'Role'), 'rules')['x-kubernetes-list-type']).toBe(
      'atomic',
    );
  });

  it('maps special types the way kube-apiserver publishes them', () => {
    expect(at(podSpec(), 'containers.[].ports.[].containerPort')).toMatchObject({ type: 'integer', format: 'int32' });
    expect(at(podSpec(), 'terminationGracePeriodSeconds')).toMatchObject({ type: 'integer', format: 'int64' });
    expect(at(builtinSchema('meta.k8s.io', 'v1', 'ObjectMeta'), 'generation').format).toBe('int64');
    expect(at(podSpec(), 'containers.[].livenessProbe.httpGet.port')).toMatchObject({
      'x-kubernetes-int-or-string': true,
    });
    expect(at(podSpec(), 'containers.[].resources.limits.{}')).toMatchObject({
      'x-kubernetes-int-or-string': true,
      format: 'quantity',
    });
    expect(at(builtinSchema('meta.k8s.io', 'v1', 'ObjectMeta'), 'creationTimestamp')).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
    expect(at(builtinSchema('coordination.k8s.io', 'v1', 'Lease'), 'spec.renewTime')).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
    expect(at(builtinSchema('meta.k8s.io', 'v1', 'ObjectMeta'), 'labels')).toMatchObject({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    expect(at(builtinSchema('apps', 'v1', 'Deployment'), 'spec').required).toEqual(['selector', 'template']);
    expect(at(builtinSchema('apps', 'v1', 'Deployment'), 'spec.replicas').description).toBe('Number of desired pods.');
  });

  it('cuts the recursive JSONSchemaProps below its first level and keeps the CRD extensions', () => {
    const crd = builtinSchema('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition');
    const root = at(crd, 'spec.versions.[].schema.openAPIV3Schema');
    expect(root.properties?.type).toMatchObject({ type: 'string' });
    expect(at(root, 'properties.{}')).toMatchObject({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(at(root, 'maximum')).toMatchObject({ type: 'number', format: 'double' });
    expect(at(root, 'x-kubernetes-preserve-unknown-fields').type).toBe('boolean');
    expect(at(root, 'x-kubernetes-validations')).toMatchObject({
      'x-kubernetes-list-map-keys': ['rule'],
      items: { required: ['rule'] },
    });
    expect(at(root, 'additionalProperties')).toEqual(
      expect.objectContaining({ 'x-kubernetes-preserve-unknown-fields': true }),
    );
    expect(at(root, 'additionalProperties').type).toBeUndefined();
  });

  it('are frozen so no caller can change them for the next', () => {
    expect(Object.isFrozen(at(podSpec(), 'containers'))).toBe(true);
  });
});
