/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), as client-go's typed
 * clients send them (`kubectl create namespace|configmap|secret|deployment|role ...`, `kubectl run`,
 * `kubectl drain`): the `k8s\0` magic, then a runtime.Unknown {typeMeta{apiVersion=1, kind=2}=1, raw=2,
 * contentEncoding=3, contentType=4} around the object's own encoding. Decoded into the JSON object the
 * server works on; message definitions are the ones gogo-protobuf embeds in kubectl 1.32
 * (descriptors.json).
 */

import { decodeMessage, messageDef } from './message.ts';
import { ProtobufDecodeError, ProtoReader, utf8String, WIRE_LEN } from './wire.ts';

export { ProtobufDecodeError };

export interface DecodedKubeObject {
  apiVersion: string;
  kind: string;
  object: Record<string, unknown>;
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];
export const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** API group (all served at v1) → protobuf package. */
export const PACKAGES: Record<string, string> = {
  '': 'k8s.io.api.core.v1',
  apps: 'k8s.io.api.apps.v1',
  'rbac.authorization.k8s.io': 'k8s.io.api.rbac.v1',
  'coordination.k8s.io': 'k8s.io.api.coordination.v1',
  policy: 'k8s.io.api.policy.v1',
  'meta.k8s.io': META,
};

/**
 * apimachinery registers its options kinds in every group version, so client-go's typed Delete frames
 * DeleteOptions as e.g. `v1, Kind=DeleteOptions` or `apps/v1, Kind=DeleteOptions`.
 */
const EVERY_GROUP_VERSION = new Set(['DeleteOptions']);

interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
}

export function isKubeProtobuf(body: Uint8Array): boolean {
  return body.length >= MAGIC.length && MAGIC.every((b, i) => body[i] === b);
}

function readEnvelope(body: Uint8Array): Envelope {
  if (!isKubeProtobuf(body)) {
    throw new ProtobufDecodeError(
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
  }
  const env: Envelope = { apiVersion: '', kind: '', raw: new Uint8Array(), contentEncoding: '' };
  const r = new ProtoReader(body, MAGIC.length);
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) {
      const tm = new ProtoReader(r.bytes());
      while (!tm.done()) {
        const t = tm.tag();
        if (t.field === 1 && t.wire === WIRE_LEN) env.apiVersion = utf8String(tm.bytes());
        else if (t.field === 2 && t.wire === WIRE_LEN) env.kind = utf8String(tm.bytes());
        else tm.skip(t.wire);
      }
    } else if (field === 2 && wire === WIRE_LEN) env.raw = r.bytes();
    else if (field === 3 && wire === WIRE_LEN) env.contentEncoding = utf8String(r.bytes());
    else r.skip(wire);
  }
  return env;
}

function messageType(apiVersion: string, kind: string): string {
  if (EVERY_GROUP_VERSION.has(kind)) return `${META}.${kind}`;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const pkg = version === 'v1' ? PACKAGES[group] : undefined;
  const typeName = pkg && `${pkg}.${kind}`;
  if (!typeName || !messageDef(typeName)) {
    throw new ProtobufDecodeError(
      `no kind "${kind}" is registered for version "${apiVersion}" in the protobuf decoder`,
    );
  }
  return typeName;
}

/**
 * Decodes a protobuf request body into the object kube's JSON encoding gives for it. Throws
 * ProtobufDecodeError for a malformed body, a compressed payload, or a kind the decoder does not know.
 */
export function decodeKubeProtobuf(body: Uint8Array): DecodedKubeObject {
  const env = readEnvelope(body);
  if (env.contentEncoding !== '') {
    throw new ProtobufDecodeError(
      `unsupported contentEncoding "${env.contentEncoding}" in the runtime.Unknown envelope (expected none)`,
    );
  }
  if (!env.kind) throw new ProtobufDecodeError('the runtime.Unknown envelope has no typeMeta.kind');
  const fields = decodeMessage(env.raw, messageType(env.apiVersion, env.kind));
  return {
    apiVersion: env.apiVersion,
    kind: env.kind,
    object: { apiVersion: env.apiVersion, kind: env.kind, ...fields },
  };
}
