/**
 * Schema-directed decoding of one protobuf message into the object kube's JSON encoding gives for it.
 *
 * Field names in Kubernetes' generated.proto are the Go JSON names. What the wire does not say, and
 * kube's JSON needs, comes from data extracted from the Go types:
 * - gogo-protobuf writes every non-pointer field, zero or not; kube's JSON leaves zero scalars out
 *   (omitempty). A zero is kept only for Go pointer fields (pointer-fields.json), where it was set.
 * - structs embedded with `json:",inline"` are spread into their parent (inline-fields.ts).
 */
import { readFileSync } from 'node:fs';
import { type Descriptors, descriptors, type FieldDef, type MessageDef } from './descriptors.ts';
import { INLINE_FIELDS } from './inline-fields.ts';
import { decodeWellKnown } from './well-known.ts';
import { ProtobufDecodeError, ProtoReader, utf8String, WIRE_LEN, WIRE_VARINT } from './wire.ts';

/** Messages the served kinds' descriptors lack: policy/v1 Eviction, which `kubectl drain` posts where pods/eviction is served. */
const EXTRA: Descriptors = {
  'k8s.io.api.policy.v1.Eviction': {
    fields: {
      1: ['metadata', 'message', 0, 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta'],
      2: ['deleteOptions', 'message', 0, 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'],
    },
  },
};

let pointerFields: Set<string> | undefined;
function isPointer(typeName: string, field: string): boolean {
  pointerFields ??= new Set(
    (JSON.parse(readFileSync(new URL('./pointer-fields.json', import.meta.url), 'utf8')) as { fields: string[] })
      .fields,
  );
  return pointerFields.has(`${typeName}.${field}`);
}

export function messageDef(typeName: string): MessageDef | undefined {
  return EXTRA[typeName] ?? descriptors()[typeName];
}

const WIRE_OF: Record<string, number> = {
  string: WIRE_LEN,
  bytes: WIRE_LEN,
  bool: WIRE_VARINT,
  int32: WIRE_VARINT,
  int64: WIRE_VARINT,
};

function scalar(r: ProtoReader, type: FieldDef[1], where: string): unknown {
  switch (type) {
    case 'string':
      return utf8String(r.bytes());
    case 'bytes':
      return Buffer.from(r.bytes()).toString('base64');
    case 'bool':
      return r.varint() !== 0n;
    case 'int32':
      return Number(BigInt.asIntN(32, r.varint()));
    case 'int64':
      return Number(BigInt.asIntN(64, r.varint()));
    default:
      // The served kinds use no other scalar types (floats, fixed, zigzag).
      throw new ProtobufDecodeError(`${where}: unsupported protobuf type ${type}`);
  }
}

function zeroOf(type: FieldDef[1]): unknown {
  return type === 'bool' ? false : type === 'int32' || type === 'int64' ? 0 : '';
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

/** A message-typed value: a well-known type's JSON form, or a nested object (never undefined for those). */
function messageValue(bytes: Uint8Array, typeName: string): unknown {
  const special = decodeWellKnown(typeName, bytes);
  return special ? special.value : decodeMessage(bytes, typeName);
}

/** map<K, V> entries are messages {key = 1, value = 2}; a missing key or value is the zero value. */
function mapEntry(bytes: Uint8Array, entryType: string, def: MessageDef): [string, unknown] {
  const keyField = def.fields[1];
  const valueField = def.fields[2];
  if (!keyField || !valueField) throw new Error(`protobuf descriptors: map entry ${entryType} lacks field 1 or 2`);
  const [, keyType] = keyField;
  const [, valueType, , valueMessage] = valueField;
  let key: unknown = zeroOf(keyType);
  let value: unknown;
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_OF[keyType]) key = scalar(r, keyType, `${entryType}.key`);
    else if (field === 2 && valueType === 'message' && wire === WIRE_LEN)
      value = messageValue(r.bytes(), valueMessage!);
    else if (field === 2 && wire === WIRE_OF[valueType]) value = scalar(r, valueType, `${entryType}.value`);
    else r.skip(wire);
  }
  if (value === undefined)
    value = valueType === 'message' ? messageValue(new Uint8Array(), valueMessage!) : zeroOf(valueType);
  return [String(key), value ?? null];
}

export function decodeMessage(bytes: Uint8Array, typeName: string): Record<string, unknown> {
  const def = messageDef(typeName);
  if (!def) throw new ProtobufDecodeError(`no protobuf definition for ${typeName}`);
  const out: Record<string, unknown> = {};
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const { field, wire } = r.tag();
    const f = def.fields[field];
    if (!f) {
      r.skip(wire); // unknown fields are ignored, as gogo-protobuf does
      continue;
    }
    const [name, type, repeated, child] = f;
    const where = `${typeName}.${name}`;
    if (type === 'message') {
      if (wire !== WIRE_LEN)
        throw new ProtobufDecodeError(`${where}: expected a length-delimited message, got wire type ${wire}`);
      const sub = r.bytes();
      const childDef = messageDef(child!);
      if (!childDef) throw new ProtobufDecodeError(`${where}: no protobuf definition for ${child}`);
      if (childDef.map) {
        const [k, v] = mapEntry(sub, child!, childDef);
        out[name] ??= {};
        (out[name] as Record<string, unknown>)[k] = v;
        continue;
      }
      const value = messageValue(sub, child!);
      if (repeated) {
        out[name] ??= [];
        (out[name] as unknown[]).push(value ?? null);
      } else if (value === undefined) delete out[name];
      else out[name] = value;
      continue;
    }
    if (repeated && wire === WIRE_LEN && WIRE_OF[type] === WIRE_VARINT) {
      // Packed repeated varints (proto3 style; gogo's proto2 output is unpacked, both are valid).
      const packed = new ProtoReader(r.bytes());
      out[name] ??= [];
      const list = out[name] as unknown[];
      while (!packed.done()) list.push(scalar(packed, type, where));
      continue;
    }
    if (WIRE_OF[type] === undefined) throw new ProtobufDecodeError(`${where}: unsupported protobuf type ${type}`);
    if (wire !== WIRE_OF[type])
      throw new ProtobufDecodeError(`${where}: expected wire type ${WIRE_OF[type]} for ${type}, got ${wire}`);
    const value = scalar(r, type, where);
    if (repeated) {
      out[name] ??= [];
      (out[name] as unknown[]).push(value);
    } else if (isZero(value) && !isPointer(typeName, name)) delete out[name];
    else out[name] = value;
  }
  for (const [, [name]] of Object.entries(def.fields)) {
    const embedded = out[name];
    if (INLINE_FIELDS.has(`${typeName}.${name}`) && typeof embedded === 'object' && embedded !== null) {
      delete out[name];
      Object.assign(out, embedded);
    }
  }
  return out;
}
