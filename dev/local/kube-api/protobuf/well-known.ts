/**
 * apimachinery types whose JSON form is not their protobuf message: metav1.Time / MicroTime are RFC3339
 * strings, resource.Quantity a string, intstr.IntOrString a number or a string, and
 * runtime.RawExtension / metav1.FieldsV1 carry JSON bytes that are the value itself.
 */
import { ProtobufDecodeError, ProtoReader, utf8String, WIRE_LEN, WIRE_VARINT } from './wire.ts';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Reads the fields of a small message as raw varints / byte strings by field number. */
function readFields(bytes: Uint8Array, typeName: string): Map<number, bigint | Uint8Array> {
  const fields = new Map<number, bigint | Uint8Array>();
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (wire === WIRE_VARINT) fields.set(field, r.varint());
    else if (wire === WIRE_LEN) fields.set(field, r.bytes());
    else throw new ProtobufDecodeError(`${typeName}: unexpected wire type ${wire} for field ${field}`);
  }
  return fields;
}

const int = (v: bigint | Uint8Array | undefined, bits: 32 | 64): number =>
  typeof v === 'bigint' ? Number(BigInt.asIntN(bits, v)) : 0;
const str = (v: bigint | Uint8Array | undefined): string => (v instanceof Uint8Array ? utf8String(v) : '');

function time(bytes: Uint8Array, typeName: string, micro: boolean): string | undefined {
  const f = readFields(bytes, typeName);
  const seconds = int(f.get(1), 64);
  const nanos = int(f.get(2), 32);
  // The zero time is `null` in kube's JSON: leave the field out.
  if (seconds === 0 && nanos === 0) return undefined;
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) throw new ProtobufDecodeError(`${typeName}: seconds ${seconds} is out of range`);
  const base = date.toISOString().slice(0, 19);
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`;
}

function json(bytes: Uint8Array, typeName: string): unknown {
  const raw = readFields(bytes, typeName).get(1);
  if (!(raw instanceof Uint8Array) || raw.length === 0) return undefined;
  try {
    return JSON.parse(utf8String(raw));
  } catch {
    throw new ProtobufDecodeError(`${typeName}: raw is not JSON (only JSON-encoded embedded objects are supported)`);
  }
}

/**
 * Decodes `bytes` as the well-known type `typeName`. Returns `{ value }` (value undefined: leave the
 * field out) for a well-known type, or undefined when `typeName` is an ordinary message.
 */
export function decodeWellKnown(typeName: string, bytes: Uint8Array): { value: unknown } | undefined {
  switch (typeName) {
    case `${META}.Time`:
      return { value: time(bytes, typeName, false) };
    case `${META}.MicroTime`:
      return { value: time(bytes, typeName, true) };
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return { value: str(readFields(bytes, typeName).get(1)) || '0' };
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString': {
      const f = readFields(bytes, typeName);
      return { value: int(f.get(1), 64) === 1 ? str(f.get(3)) : int(f.get(2), 32) };
    }
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `${META}.FieldsV1`:
      return { value: json(bytes, typeName) };
    default:
      return undefined;
  }
}
