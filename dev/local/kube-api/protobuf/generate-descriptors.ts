/**
 * Dev tool: extracts the protobuf message definitions of the kinds the local API serves from the
 * kubectl binary (gogo-protobuf embeds each generated.proto as a gzipped FileDescriptorProto) and writes
 * descriptors.json. Run: `npx node dev/local/kube-api/protobuf/generate-descriptors.ts [/usr/bin/kubectl]`.
 * The JSON is committed; the server never needs kubectl at run time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { Descriptors, FieldDef } from './descriptors.ts';
import { ProtoReader, utf8String, WIRE_LEN, WIRE_VARINT } from './wire.ts';

const WANTED_FILES = [
  'k8s.io/api/core/v1/generated.proto',
  'k8s.io/api/apps/v1/generated.proto',
  'k8s.io/api/rbac/v1/generated.proto',
  'k8s.io/api/coordination/v1/generated.proto',
  'k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto',
  'k8s.io/apimachinery/pkg/runtime/generated.proto',
  'k8s.io/apimachinery/pkg/runtime/schema/generated.proto',
  'k8s.io/apimachinery/pkg/api/resource/generated.proto',
  'k8s.io/apimachinery/pkg/util/intstr/generated.proto',
];

const TYPE_NAMES: Record<number, FieldDef[1]> = {
  1: 'double',
  2: 'float',
  3: 'int64',
  4: 'uint64',
  5: 'int32',
  6: 'fixed64',
  7: 'fixed32',
  8: 'bool',
  9: 'string',
  11: 'message',
  12: 'bytes',
  13: 'uint32',
  15: 'sfixed32',
  16: 'sfixed64',
  17: 'sint32',
  18: 'sint64',
};

function parseField(bytes: Uint8Array): {
  name: string;
  number: number;
  label: number;
  type: number;
  typeName?: string;
} {
  const r = new ProtoReader(bytes);
  const f = { name: '', number: 0, label: 1, type: 0, typeName: undefined as string | undefined };
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) f.name = utf8String(r.bytes());
    else if (field === 3 && wire === WIRE_VARINT) f.number = Number(r.varint());
    else if (field === 4 && wire === WIRE_VARINT) f.label = Number(r.varint());
    else if (field === 5 && wire === WIRE_VARINT) f.type = Number(r.varint());
    else if (field === 6 && wire === WIRE_LEN) f.typeName = utf8String(r.bytes()).replace(/^\./, '');
    else r.skip(wire);
  }
  return f;
}

function parseMessage(bytes: Uint8Array, scope: string, out: Descriptors): void {
  const r = new ProtoReader(bytes);
  let name = '';
  const fields: Uint8Array[] = [];
  const nested: Uint8Array[] = [];
  let mapEntry = false;
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) name = utf8String(r.bytes());
    else if (field === 2 && wire === WIRE_LEN) fields.push(r.bytes());
    else if (field === 3 && wire === WIRE_LEN) nested.push(r.bytes());
    else if (field === 7 && wire === WIRE_LEN) {
      const opts = new ProtoReader(r.bytes());
      while (!opts.done()) {
        const t = opts.tag();
        if (t.field === 7 && t.wire === WIRE_VARINT) mapEntry = opts.varint() === 1n;
        else opts.skip(t.wire);
      }
    } else r.skip(wire);
  }
  const full = `${scope}.${name}`;
  const defs: Record<string, FieldDef> = {};
  for (const fb of fields) {
    const f = parseField(fb);
    const type = TYPE_NAMES[f.type];
    if (!type) throw new Error(`${full}.${f.name}: unsupported field type ${f.type}`);
    const def: FieldDef = [f.name, type, f.label === 3 ? 1 : 0];
    if (f.typeName) def.push(f.typeName);
    defs[f.number] = def;
  }
  out[full] = mapEntry ? { fields: defs, map: true } : { fields: defs };
  for (const nb of nested) parseMessage(nb, full, out);
}

function parseFile(bytes: Uint8Array, out: Descriptors): string {
  const r = new ProtoReader(bytes);
  let name = '';
  let pkg = '';
  const messages: Uint8Array[] = [];
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) name = utf8String(r.bytes());
    else if (field === 2 && wire === WIRE_LEN) pkg = utf8String(r.bytes());
    else if (field === 4 && wire === WIRE_LEN) messages.push(r.bytes());
    else r.skip(wire);
  }
  if (!WANTED_FILES.includes(name)) return name;
  for (const m of messages) parseMessage(m, pkg, out);
  return name;
}

export function extractDescriptors(binary: Buffer): { descriptors: Descriptors; files: string[] } {
  const descriptors: Descriptors = {};
  const files: string[] = [];
  const magic = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
  for (let idx = binary.indexOf(magic); idx >= 0; idx = binary.indexOf(magic, idx + 1)) {
    let raw: Buffer;
    try {
      raw = gunzipSync(binary.subarray(idx, idx + 4_000_000), { finishFlush: 2 });
    } catch {
      continue;
    }
    if (raw[0] !== 0x0a) continue;
    try {
      const name = parseFile(raw, descriptors);
      if (WANTED_FILES.includes(name)) files.push(name);
    } catch {
      // Not a descriptor after all.
    }
  }
  return { descriptors, files };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const source = process.argv[2] ?? '/usr/bin/kubectl';
  const { descriptors, files } = extractDescriptors(readFileSync(source));
  const missing = WANTED_FILES.filter((f) => !files.includes(f));
  if (missing.length) throw new Error(`not found in ${source}: ${missing.join(', ')}`);
  const sorted = Object.fromEntries(Object.entries(descriptors).sort(([a], [b]) => (a < b ? -1 : 1)));
  const target = fileURLToPath(new URL('./descriptors.json', import.meta.url));
  writeFileSync(target, `${JSON.stringify(sorted)}\n`);
  console.log(`wrote ${Object.keys(sorted).length} messages from ${files.length} files to ${target}`);
}
