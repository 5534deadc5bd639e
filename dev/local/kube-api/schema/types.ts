/**
 * Schema contract shared by validation, OpenAPI serving, strategic merge patch and server-side apply.
 * A SchemaNode is an OpenAPI v3 structural schema (as in a CRD's openAPIV3Schema) with every `$ref`
 * already resolved, carrying Kubernetes' extensions:
 *   x-kubernetes-list-type: atomic | set | map, x-kubernetes-list-map-keys: [...],
 *   x-kubernetes-map-type: atomic | granular, x-kubernetes-patch-strategy: "merge" | "retainKeys" | "merge,retainKeys",
 *   x-kubernetes-patch-merge-key: "name", x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields,
 *   x-kubernetes-embedded-resource.
 * Built-in kinds get theirs from a generated file; custom resources from their CRD.
 */
export interface SchemaNode {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  required?: string[];
  enum?: unknown[];
  nullable?: boolean;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  pattern?: string;
  multipleOf?: number;
  uniqueItems?: boolean;
  allOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  not?: SchemaNode;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  [extension: `x-${string}`]: unknown;
}

/** One entry of Status.details.causes, as kube-apiserver reports field errors. */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}
