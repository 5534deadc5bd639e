/**
 * Dev tool: lists the singular scalar fields of the served kinds that are Go pointers, and writes
 * pointer-fields.json. Run: `npx node local/kube-api/protobuf/generate-pointer-fields.ts [/usr/bin/kubectl]`.
 *
 * gogo-protobuf writes a non-pointer field even when it holds its zero value, so a zero on the wire only
 * means "set" for pointer fields (`replicas: 0`, `runAsUser: 0`, `optional: false`). The descriptors that
 * gogo embeds in kubectl (gzipped FileDescriptorProtos) still carry go-to-protobuf's field options:
 * `(gogoproto.nullable) = false` (extension 65001) marks every non-pointer field, so a scalar without it
 * is a pointer. The published generated.proto files have those options stripped, hence the binary.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { ProtoReader, utf8String, WIRE_LEN, WIRE_VARINT } from './wire.ts';

const FILES = [
  'k8s.io/api/core/v1/generated.proto',
  'k8s.io/api/apps/v1/generated.proto',
  'k8s.io/api/rbac/v1/generated.proto',
  'k8s.io/api/coordination/v1/generated.proto',
  'k8s.io/api/policy/v1/generated.proto',
  'k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto',
];
const GOGO_NULLABLE = 65001;
const TYPE_MESSAGE = 11;
const LABEL_REPEATED = 3;

function fieldsOf<T>(bytes: Uint8Array, onField: (field: number, wire: number, r: ProtoReader) => T | undefined): void {
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (onField(field, wire, r) === undefined) r.skip(wire);
  }
}

/** FieldDescriptorProto: name=1, label=4, type=5, options=8. */
function isPointerScalar(field: Uint8Array): { name: string; pointer: boolean } {
  let name = '';
  let label = 0;
  let type = 0;
  let nullable = true;
  fieldsOf(field, (f, wire, r) => {
    if (f === 1 && wire === WIRE_LEN) return (name = utf8String(r.bytes()));
    if (f === 4 && wire === WIRE_VARINT) return (label = Number(r.varint()));
    if (f === 5 && wire === WIRE_VARINT) return (type = Number(r.varint()));
    if (f === 8 && wire === WIRE_LEN) {
      fieldsOf(r.bytes(), (o, ow, or) => (o === GOGO_NULLABLE && ow === WIRE_VARINT ? (nullable = or.varint() !== 0n) : undefined));
      return true;
    }
    return undefined;
  });
  return { name, pointer: nullable && type !== TYPE_MESSAGE && label !== LABEL_REPEATED };
}

/** DescriptorProto: name=1, field=2, nested_type=3, options=7 (MessageOptions.map_entry=7). */
function collect(message: Uint8Array, scope: string, out: string[]): void {
  let name = '';
  let mapEntry = false;
  const fields: Uint8Array[] = [];
  const nested: Uint8Array[] = [];
  fieldsOf(message, (f, wire, r) => {
    if (f === 1 && wire === WIRE_LEN) return (name = utf8String(r.bytes()));
    if (f === 2 && wire === WIRE_LEN) return fields.push(r.bytes());
    if (f === 3 && wire === WIRE_LEN) return nested.push(r.bytes());
    if (f === 7 && wire === WIRE_LEN) {
      fieldsOf(r.bytes(), (o, ow, or) => (o === 7 && ow === WIRE_VARINT ? (mapEntry = or.varint() !== 0n) : undefined));
      return true;
    }
    return undefined;
  });
  // Map entries are decoded as a whole (an empty value stays ""), not field by field.
  if (mapEntry) return;
  for (const field of fields) {
    const { name: fieldName, pointer } = isPointerScalar(field);
    if (pointer) out.push(`${scope}.${name}.${fieldName}`);
  }
  for (const n of nested) collect(n, `${scope}.${name}`, out);
}

export function extractPointerFields(binary: Buffer): { fields: string[]; files: string[] } {
  const fields: string[] = [];
  const files: string[] = [];
  const gzipHeader = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
  for (let at = binary.indexOf(gzipHeader); at >= 0; at = binary.indexOf(gzipHeader, at + 1)) {
    let file: Buffer;
    try {
      file = gunzipSync(binary.subarray(at, at + 4_000_000), { finishFlush: 2 });
    } catch {
      continue;
    }
    if (file[0] !== 0x0a) continue;
    try {
      // FileDescriptorProto: name=1, package=2, message_type=4.
      let name = '';
      let pkg = '';
      const messages: Uint8Array[] = [];
      fieldsOf(file, (f, wire, r) => {
        if (f === 1 && wire === WIRE_LEN) return (name = utf8String(r.bytes()));
        if (f === 2 && wire === WIRE_LEN) return (pkg = utf8String(r.bytes()));
        if (f === 4 && wire === WIRE_LEN) return messages.push(r.bytes());
        return undefined;
      });
      if (!FILES.includes(name) || files.includes(name)) continue;
      files.push(name);
      for (const m of messages) collect(m, pkg, fields);
    } catch {
      // A gzip stream that is not a descriptor.
    }
  }
  return { fields: fields.sort(), files };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const source = process.argv[2] ?? '/usr/bin/kubectl';
  const { fields, files } = extractPointerFields(readFileSync(source));
  const missing = FILES.filter((f) => !files.includes(f));
  if (missing.length) throw new Error(`not found in ${source}: ${missing.join(', ')}`);
  const target = fileURLToPath(new URL('./pointer-fields.json', import.meta.url));
  const header = {
    source: `gogo-protobuf descriptors embedded in ${source} (kubectl 1.32): ${FILES.join(', ')}`,
    license: 'derived from the Kubernetes project (k8s.io/api, k8s.io/apimachinery), Apache-2.0',
    generator: 'local/kube-api/protobuf/generate-pointer-fields.ts',
  };
  writeFileSync(target, JSON.stringify({ ...header, fields }, null, 1) + '\n');
  console.log(`wrote ${fields.length} pointer scalar fields from ${files.length} files to ${target}`);
}
