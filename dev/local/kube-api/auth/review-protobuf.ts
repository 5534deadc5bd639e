/**
 * kubectl's typed clients send SelfSubjectAccessReviews as protobuf. The API's general decoder only knows
 * stored kinds, so this reads the few fields a review has (k8s.io/api/authorization/v1 generated.proto):
 * SelfSubjectAccessReview{2: spec{1: resourceAttributes, 2: nonResourceAttributes}}.
 */
import { ProtobufDecodeError, ProtoReader, utf8String, WIRE_LEN } from '../protobuf/wire.ts';

const MAGIC = [0x6b, 0x38, 0x73, 0x00];
const RESOURCE_FIELDS = ['', 'namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'];
const NON_RESOURCE_FIELDS = ['', 'path', 'verb'];

export function isProtobuf(body: Uint8Array): boolean {
  return body.length >= MAGIC.length && MAGIC.every((b, i) => body[i] === b);
}

function strings(bytes: Uint8Array, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (wire === WIRE_LEN && names[field]) out[names[field]] = utf8String(r.bytes());
    else r.skip(wire);
  }
  return out;
}

function fieldBytes(bytes: Uint8Array, wanted: number): Uint8Array | undefined {
  let found: Uint8Array | undefined;
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === wanted && wire === WIRE_LEN) found = r.bytes();
    else r.skip(wire);
  }
  return found;
}

/** The review's spec, in the JSON shape. */
export function decodeReviewSpec(body: Uint8Array): Record<string, unknown> {
  if (!isProtobuf(body))
    throw new ProtobufDecodeError(
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
  const raw = fieldBytes(body.subarray(MAGIC.length), 2) ?? new Uint8Array();
  const spec = fieldBytes(raw, 2) ?? new Uint8Array();
  const resource = fieldBytes(spec, 1);
  const nonResource = fieldBytes(spec, 2);
  return {
    ...(resource ? { resourceAttributes: strings(resource, RESOURCE_FIELDS) } : {}),
    ...(nonResource ? { nonResourceAttributes: strings(nonResource, NON_RESOURCE_FIELDS) } : {}),
  };
}
