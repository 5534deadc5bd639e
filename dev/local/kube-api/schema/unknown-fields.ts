/**
 * kube-apiserver's wording for unknown fields under server-side field validation: the 400 BadRequest
 * message for `fieldValidation=Strict` and the Warning headers for `Warn`.
 */

/**
 * `strict decoding error: unknown field "spec.foo", unknown field "spec.bar"`; with the version given,
 * wrapped the way the REST handler wraps decode errors:
 * `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ...`.
 */
export function strictDecodingError(kind: string, unknownFields: string[], version?: string): string {
  const strict = `strict decoding error: ${unknownFields.map(unknownFieldText).join(', ')}`;
  return version === undefined
    ? strict
    : `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${strict}`;
}

/** One warning per field, e.g. `unknown field "spec.foo"` (sent as `Warning: 299 - "<text>"`). */
export function unknownFieldWarnings(unknownFields: string[]): string[] {
  return unknownFields.map(unknownFieldText);
}

function unknownFieldText(path: string): string {
  return `unknown field ${JSON.stringify(path)}`;
}
