/**
 * The root type server-side apply works with. kube's type converter always knows ObjectMeta (labels and
 * annotations are granular maps, finalizers a set, ownerReferences a map keyed by uid), even for custom
 * resources whose schema only says `metadata: {type: object}`; this supplies it where the schema does not.
 */
import type { SchemaNode } from '../../schema/types.ts';
import { effectiveSchema } from '../schema-view.ts';

const str: SchemaNode = { type: 'string' };
const stringMap: SchemaNode = { type: 'object', additionalProperties: str };

export const objectMetaSchema: SchemaNode = {
  type: 'object',
  properties: {
    name: str,
    generateName: str,
    namespace: str,
    selfLink: str,
    uid: str,
    resourceVersion: str,
    generation: { type: 'integer' },
    creationTimestamp: str,
    deletionTimestamp: str,
    deletionGracePeriodSeconds: { type: 'integer' },
    labels: stringMap,
    annotations: stringMap,
    ownerReferences: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          apiVersion: str,
          kind: str,
          name: str,
          uid: str,
          controller: { type: 'boolean' },
          blockOwnerDeletion: { type: 'boolean' },
        },
        'x-kubernetes-map-type': 'atomic',
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'uid',
    },
    finalizers: { type: 'array', items: str, 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' },
    managedFields: {
      type: 'array',
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      'x-kubernetes-list-type': 'atomic',
    },
  },
};

const roots = new WeakMap<SchemaNode, SchemaNode>();
const untypedRoot: SchemaNode = {
  type: 'object',
  properties: { apiVersion: str, kind: str, metadata: objectMetaSchema },
  'x-kubernetes-preserve-unknown-fields': true,
};

/** The object schema with apiVersion, kind and a full ObjectMeta; undefined means no type info. */
export function rootSchema(schema: SchemaNode | undefined): SchemaNode {
  if (!schema) return untypedRoot;
  let root = roots.get(schema);
  if (!root) {
    const s = effectiveSchema(schema) ?? {};
    // A CRD's metadata schema only constrains name/generateName; a full ObjectMeta declares labels.
    const declaredMeta = s.properties?.metadata;
    const meta = effectiveSchema(declaredMeta);
    const hasMeta = meta?.properties?.labels !== undefined;
    root = {
      ...s,
      properties: {
        apiVersion: str,
        kind: str,
        ...s.properties,
        metadata: hasMeta && declaredMeta ? declaredMeta : objectMetaSchema,
      },
    };
    roots.set(schema, root);
  }
  return root;
}
