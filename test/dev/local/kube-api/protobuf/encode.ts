/**
 * Test support: encodes kube JSON objects as Kubernetes protobuf bodies with protobufjs, from the same
 * message definitions the server decodes with, so decoding can be checked by round trip. Like
 * gogo-protobuf, it writes the special apimachinery types (Time, MicroTime, IntOrString, Quantity,
 * RawExtension, FieldsV1) in their message form and maps as repeated key/value entries.
 */
import protobuf from 'protobufjs';
import { META, PACKAGES } from '../../../../../dev/local/kube-api/protobuf/decode.ts';
import { descriptors } from '../../../../../dev/local/kube-api/protobuf/descriptors.ts';
import { INLINE_FIELDS } from '../../../../../dev/local/kube-api/protobuf/inline-fields.ts';

/** protobufjs names may not contain dots inside one namespace level: flatten full names. */
const flat = (fullName: string) => fullName.replace(/\./g, '_');

let root: protobuf.Root | undefined;
function types(): protobuf.Root {
  if (root) return root;
  root = new protobuf.Root();
  for (const [full, def] of Object.entries(descriptors())) {
    const type = new protobuf.Type(flat(full));
    for (const [num, [name, scalar, repeated, child]] of Object.entries(def.fields)) {
      type.add(
        new protobuf.Field(
          name,
          Number(num),
          scalar === 'message' ? flat(child!) : scalar,
          repeated ? 'repeated' : 'optional',
        ),
      );
    }
    root.add(type);
  }
  root.resolveAll();
  return root;
}

function timeMessage(value: string, micro: boolean): { seconds: number; nanos?: number } {
  const m = /^(.*?)(?:\.(\d+))?Z$/.exec(value);
  if (!m) throw new Error(`not an RFC3339 UTC time: ${value}`);
  const seconds = Date.parse(`${m[1]}Z`) / 1000;
  return micro && m[2] ? { seconds, nanos: Number(m[2].padEnd(9, '0')) } : { seconds };
}

/** Converts one JSON value of message type `typeName` to the plain object protobufjs encodes. */
function toMessage(value: unknown, typeName: string): unknown {
  switch (typeName) {
    case `${META}.Time`:
      return timeMessage(value as string, false);
    case `${META}.MicroTime`:
      return timeMessage(value as string, true);
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return typeof value === 'number' ? { type: 0, intVal: value } : { type: 1, strVal: value };
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return { string: value };
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
      return { raw: Buffer.from(JSON.stringify(value)) };
    case `${META}.FieldsV1`: // the one Go-cased proto field name (FieldsV1.Raw)
      return { Raw: Buffer.from(JSON.stringify(value)) };
  }
  const def = descriptors()[typeName];
  if (!def) throw new Error(`no message ${typeName}`);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(nestInlineFields(value as Record<string, unknown>, typeName))) {
    const field = Object.values(def.fields).find(([name]) => name === key);
    if (!field) throw new Error(`${typeName} has no field ${key}`);
    const [, scalar, repeated, child] = field;
    const convert = (x: unknown): unknown =>
      scalar === 'message' ? toMessage(x, child!) : scalar === 'bytes' ? Buffer.from(x as string, 'base64') : x;
    if (scalar === 'message' && descriptors()[child!].map) {
      const valueField = descriptors()[child!].fields['2'];
      out[key] = Object.entries(v as Record<string, unknown>).map(([k, x]) => ({
        key: k,
        value:
          valueField[1] === 'message'
            ? toMessage(x, valueField[3]!)
            : valueField[1] === 'bytes'
              ? Buffer.from(x as string, 'base64')
              : x,
      }));
    } else out[key] = repeated ? (v as unknown[]).map(convert) : convert(v);
  }
  return out;
}

/** The reverse of kube's JSON inlining: gathers an embedded struct's fields into its proto field. */
function nestInlineFields(value: Record<string, unknown>, typeName: string): Record<string, unknown> {
  const out = { ...value };
  for (const [name, , , child] of Object.values(descriptors()[typeName].fields)) {
    if (!INLINE_FIELDS.has(`${typeName}.${name}`)) continue;
    const childNames = new Set(Object.values(descriptors()[child!].fields).map(([n]) => n));
    const nested: Record<string, unknown> = {};
    for (const key of Object.keys(out)) {
      if (childNames.has(key)) {
        nested[key] = out[key];
        delete out[key];
      }
    }
    out[name] = nested;
  }
  return out;
}

function encode(typeName: string, message: unknown): Uint8Array {
  const type = types().lookupType(flat(typeName));
  return type.encode(message as Record<string, unknown>).finish();
}

/** Encodes a kube JSON object (with apiVersion and kind) as an `application/vnd.kubernetes.protobuf` body. */
export function encodeKubeProtobuf(object: { apiVersion: string; kind: string } & Record<string, unknown>): Buffer {
  const { apiVersion, kind, ...rest } = object;
  const slash = apiVersion.indexOf('/');
  const pkg = PACKAGES[slash < 0 ? '' : apiVersion.slice(0, slash)];
  if (!pkg) throw new Error(`no protobuf package for ${apiVersion}`);
  const raw = encode(`${pkg}.${kind}`, toMessage(rest, `${pkg}.${kind}`));
  const unknown = encode('k8s.io.apimachinery.pkg.runtime.Unknown', {
    typeMeta: { apiVersion, kind },
    raw,
    contentEncoding: '',
    contentType: '',
  });
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]);
}
