/** Hand-built schemas shaped like kube's OpenAPI for the kinds the patch tests use. */
import type { SchemaNode } from '../../../../../dev/local/kube-api/schema/types.ts';

const str: SchemaNode = { type: 'string' };
const int: SchemaNode = { type: 'integer' };
const stringMap: SchemaNode = { type: 'object', additionalProperties: str };

export const objectMeta: SchemaNode = {
  type: 'object',
  properties: {
    name: str,
    namespace: str,
    uid: str,
    resourceVersion: str,
    generation: int,
    creationTimestamp: str,
    labels: stringMap,
    annotations: stringMap,
    finalizers: { type: 'array', items: str, 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' },
    ownerReferences: {
      type: 'array',
      items: {
        type: 'object',
        properties: { apiVersion: str, kind: str, name: str, uid: str },
        'x-kubernetes-map-type': 'atomic',
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'uid',
    },
  },
};

const container: SchemaNode = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str,
    image: str,
    args: { type: 'array', items: str, 'x-kubernetes-list-type': 'atomic' },
    env: {
      type: 'array',
      items: { type: 'object', required: ['name'], properties: { name: str, value: str } },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
    },
    ports: {
      type: 'array',
      items: {
        type: 'object',
        properties: { containerPort: int, name: str, protocol: { type: 'string', default: 'TCP' } },
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'containerPort',
    },
    volumeMounts: {
      type: 'array',
      items: { type: 'object', properties: { name: str, mountPath: str } },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'mountPath',
    },
    resources: { type: 'object', properties: { limits: stringMap, requests: stringMap } },
  },
};

const volume: SchemaNode = {
  type: 'object',
  properties: {
    name: str,
    emptyDir: { type: 'object', properties: { medium: str } },
    configMap: { type: 'object', properties: { name: str } },
  },
};

const podSpec: SchemaNode = {
  type: 'object',
  required: ['containers'],
  properties: {
    containers: {
      type: 'array',
      items: container,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
    },
    volumes: {
      type: 'array',
      items: volume,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-patch-strategy': 'merge,retainKeys',
      'x-kubernetes-patch-merge-key': 'name',
    },
    nodeSelector: stringMap,
    tolerations: {
      type: 'array',
      items: { type: 'object', properties: { key: str, operator: str } },
      'x-kubernetes-list-type': 'atomic',
    },
  },
};

const condition: SchemaNode = { type: 'object', properties: { type: str, status: str, reason: str } };

export const deploymentSchema: SchemaNode = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: objectMeta,
    spec: {
      type: 'object',
      required: ['selector', 'template'],
      properties: {
        replicas: int,
        paused: { type: 'boolean' },
        selector: {
          type: 'object',
          properties: { matchLabels: stringMap },
          'x-kubernetes-map-type': 'atomic',
        },
        strategy: {
          type: 'object',
          properties: {
            type: str,
            rollingUpdate: { type: 'object', properties: { maxSurge: { 'x-kubernetes-int-or-string': true } } },
          },
          'x-kubernetes-patch-strategy': 'retainKeys',
        },
        template: { type: 'object', properties: { metadata: objectMeta, spec: podSpec } },
      },
    },
    status: {
      type: 'object',
      properties: {
        replicas: int,
        conditions: {
          type: 'array',
          items: condition,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'type',
        },
      },
    },
  },
};

export const configMapSchema: SchemaNode = {
  type: 'object',
  properties: { apiVersion: str, kind: str, metadata: objectMeta, data: stringMap },
};
