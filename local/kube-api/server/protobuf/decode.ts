/**
 * Decodes Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`: the `k8s\0` magic and a
 * runtime.Unknown envelope around the object) into the JSON form the rest of the server works on.
 * kubectl's typed clients (`kubectl create namespace|configmap|secret|deployment ...`, `kubectl run`)
 * always send protobuf for built-in kinds and never fall back to JSON, so the server must read it.
 *
 * gogo-protobuf writes every non-pointer field even when it holds its zero value, while kube's JSON
 * leaves those out (omitempty); zero scalars are therefore dropped, except fields that are pointers in
 * the Go types, where an explicit 0/false is meaningful.
 */
import { descriptors, type FieldDef, type MessageDef } from './descriptors.ts';
import { ProtoReader, ProtobufDecodeError, WIRE_I32, WIRE_I64, WIRE_LEN, WIRE_VARINT, utf8String } from './wire.ts';

const MAGIC = [0x6b, 0x38, 0x73, 0x00];
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Go pointer fields of the served kinds whose zero value must survive (`replicas: 0`, `immutable: false`). */
const POINTER_SCALARS = new Set([
  'replicas', 'revisionHistoryLimit', 'progressDeadlineSeconds', 'terminationGracePeriodSeconds', 'activeDeadlineSeconds',
  'automountServiceAccountToken', 'immutable', 'enableServiceLinks', 'hostUsers', 'shareProcessNamespace', 'setHostnameAsFQDN',
  'runAsUser', 'runAsGroup', 'runAsNonRoot', 'privileged', 'readOnlyRootFilesystem', 'allowPrivilegeEscalation', 'fsGroup',
  'defaultMode', 'optional', 'leaseDurationSeconds', 'leaseTransitions', 'holderIdentity', 'deletionGracePeriodSeconds',
  'controller', 'blockOwnerDeletion', 'allocateLoadBalancerNodePorts', 'priority',
]);

const PACKAGES: Record<string, string> = {
  '': 'k8s.io.api.core.v1',
  apps: 'k8s.io.api.apps.v1',
  'rbac.authorization.k8s.io': 'k8s.io.api.rbac.v1',
  'coordination.k8s.io': 'k8s.io.api.coordination.v1',
  'meta.k8s.io': META,
};

export { ProtobufDecodeError };

export function isKubernetesProtobuf(buf: Uint8Array): boolean {
  return buf.length >= 4 && MAGIC.every((b, i) => buf[i] === b);
}

export interface DecodedEnvelope {
  apiVersion: string;
  kind: string;
  object: Record<string, unknown>;
}

/** Decodes a `k8s\0`-framed runtime.Unknown holding a served built-in kind. */
export function decodeKubernetesProtobuf(buf: Uint8Array): DecodedEnvelope {
  if (!isKubernetesProtobuf(buf)) throw new ProtobufDecodeError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  const r = new ProtoReader(buf, 4);
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array | undefined;
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) {
      const tm = new ProtoReader(r.bytes());
      while (!tm.done()) {
        const t = tm.tag();
        if (t.field === 1 && t.wire === WIRE_LEN) apiVersion = utf8String(tm.bytes());
        else if (t.field === 2 && t.wire === WIRE_LEN) kind = utf8String(tm.bytes());
        else tm.skip(t.wire);
      }
    } else if (field === 2 && wire === WIRE_LEN) raw = r.bytes();
    else r.skip(wire);
  }
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const pkg = PACKAGES[group];
  const typeName = pkg && `${pkg}.${kind}`;
  if (!typeName || !descriptors()[typeName]) {
    throw new ProtobufDecodeError(`no kind "${kind}" is registered for version "${apiVersion}" in the protobuf decoder`);
  }
  const object = decodeMessage(raw ?? new Uint8Array(), typeName);
  return { apiVersion, kind, object: { apiVersion, kind, ...object } };
}

function messageDef(typeName: string): MessageDef {
  const def = descriptors()[typeName];
  if (!def) throw new ProtobufDecodeError(`unknown protobuf message ${typeName}`);
  return def;
}

function twoDigits(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** Well-known apimachinery types that have a JSON form of their own. */
function decodeSpecial(typeName: string, bytes: Uint8Array): { value: unknown } | undefined {
  switch (typeName) {
    case `${META}.Time`:
    case `${META}.MicroTime`: {
      const m = decodeMessage(bytes, typeName) as { seconds?: number; nanos?: number };
      if (!m.seconds && !m.nanos) return { value: undefined };
      const d = new Date((m.seconds ?? 0) * 1000);
      const base = d.toISOString().slice(0, 19);
      if (typeName.endsWith('MicroTime')) return { value: `${base}.${twoDigits(Math.floor((m.nanos ?? 0) / 1000), 6)}Z` };
      return { value: `${base}Z` };
    }
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity': {
      const m = decodeMessage(bytes, typeName) as { string?: string };
      return { value: m.string ?? '0' };
    }
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString': {
      const m = decodeMessage(bytes, typeName, true) as { type?: number; intVal?: number; strVal?: string };
      return { value: m.type === 1 ? (m.strVal ?? '') : (m.intVal ?? 0) };
    }
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `${META}.FieldsV1`: {
      const m = decodeRawBytes(bytes);
      if (!m || m.length === 0) return { value: undefined };
      return { value: JSON.parse(Buffer.from(m).toString('utf8')) };
    }
    case `${META}.Duration`: {
      const m = decodeMessage(bytes, typeName, true) as { duration?: number };
      return { value: goDuration(m.duration ?? 0) };
    }
    default:
      return undefined;
  }
}

function decodeRawBytes(bytes: Uint8Array): Uint8Array | undefined {
  const r = new ProtoReader(bytes);
  let raw: Uint8Array | undefined;
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) raw = r.bytes();
    else r.skip(wire);
  }
  return raw;
}

function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let rest = Math.abs(ns);
  const h = Math.floor(rest / 3.6e12);
  rest -= h * 3.6e12;
  const m = Math.floor(rest / 6e10);
  rest -= m * 6e10;
  const s = rest / 1e9;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

function scalar(def: FieldDef, wire: number, r: ProtoReader): unknown {
  const type = def[1];
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
    case 'uint32':
    case 'uint64':
      return Number(r.varint());
    case 'sint32':
    case 'sint64': {
      const v = r.varint();
      return Number((v >> 1n) ^ -(v & 1n));
    }
    case 'double':
      return Buffer.from(r.fixed(8)).readDoubleLE(0);
    case 'float':
      return Buffer.from(r.fixed(4)).readFloatLE(0);
    case 'fixed32':
      return Buffer.from(r.fixed(4)).readUInt32LE(0);
    case 'sfixed32':
      return Buffer.from(r.fixed(4)).readInt32LE(0);
    case 'fixed64':
      return Number(Buffer.from(r.fixed(8)).readBigUInt64LE(0));
    case 'sfixed64':
      return Number(Buffer.from(r.fixed(8)).readBigInt64LE(0));
    default:
      r.skip(wire);
      return undefined;
  }
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

/** Decodes one message into a plain object; `keepZero` keeps zero scalars (internal use for special types). */
export function decodeMessage(bytes: Uint8Array, typeName: string, keepZero = false): Record<string, unknown> {
  const def = messageDef(typeName);
  const out: Record<string, unknown> = {};
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const { field, wire } = r.tag();
    const f = def.fields[field];
    if (!f) {
      r.skip(wire);
      continue;
    }
    const [name, type, repeated, child] = f;
    let value: unknown;
    if (type === 'message') {
      if (wire !== WIRE_LEN) throw new ProtobufDecodeError(`${typeName}.${name}: expected a length-delimited message`);
      const sub = r.bytes();
      const childDef = messageDef(child!);
      if (childDef.map) {
        const entry = decodeMessage(sub, child!, true);
        const m = (out[name] ??= {}) as Record<string, unknown>;
        m[String(entry.key ?? '')] = entry.value ?? (childDef.fields['2']?.[1] === 'string' ? '' : entry.value);
        continue;
      }
      const special = decodeSpecial(child!, sub);
      value = special ? special.value : decodeMessage(sub, child!);
      if (value === undefined) continue;
    } else if (repeated && wire === WIRE_LEN && type !== 'string' && type !== 'bytes') {
      // Packed repeated scalars.
      const packed = new ProtoReader(r.bytes());
      const arr = (out[name] ??= []) as unknown[];
      const elemWire = type === 'double' || type === 'fixed64' || type === 'sfixed64' ? WIRE_I64 : type === 'float' || type === 'fixed32' || type === 'sfixed32' ? WIRE_I32 : WIRE_VARINT;
      while (!packed.done()) arr.push(scalar(f, elemWire, packed));
      continue;
    } else {
      value = scalar(f, wire, r);
      if (!repeated && !keepZero && isZero(value) && !POINTER_SCALARS.has(name)) continue;
    }
    if (repeated) ((out[name] ??= []) as unknown[]).push(value);
    else out[name] = value;
  }
  return out;
}
