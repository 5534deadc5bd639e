/**
 * Schemas, validation and OpenAPI v3 for the local Kubernetes API. The HTTP layer calls these; patch
 * algorithms read the x-kubernetes-* extensions on the returned SchemaNodes.
 */

export { builtinSchema, isBuiltinSchema } from './builtin.ts';
export { builtinDecodeError } from './builtin-decode.ts';
export { crdVersionSchema, validateCrd, withCrdDefaults } from './crd.ts';
export { type OpenApiResource, openApiV3Document, openApiV3Hash, openApiV3Index, openApiV3PathKey } from './openapi.ts';
export type { SchemaNode, StatusCause } from './types.ts';
export { strictDecodingError, unknownFieldWarnings } from './unknown-fields.ts';
export { type FieldValidation, type SchemaValidationResult, validateAgainstSchema } from './validate.ts';
