import { describe, expect, it } from 'vitest';
import { decodeKubeProtobuf, ProtobufDecodeError } from '../../../../../dev/local/kube-api/protobuf/decode.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
/** A length-delimited field (lengths < 128 only, enough for these samples). */
const ld = (field: number, data: Buffer | string) => {
  const bytes = Buffer.from(data);
  return Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
};
const envelope = (apiVersion: string, kind: string, raw: Buffer, ...rest: Buffer[]) =>
  Buffer.concat([hex('6b387300'), ld(1, Buffer.concat([ld(1, apiVersion), ld(2, kind)])), ld(2, raw), ...rest]);

// DELETE bodies captured from kubectl 1.32 `kubectl drain` (client-go's typed Delete): the envelope names
// the client's own group version ("v1"), not meta.k8s.io/v1.
const DELETE_GRACE_ZERO = hex('6b387300 0a130a027631120d44656c6574654f7074696f6e73 12020800 1a002200'); // --grace-period=0
const DELETE_DEFAULT = hex('6b387300 0a130a027631120d44656c6574654f7074696f6e73 1200 1a002200');
const DELETE_DRY_RUN = hex('6b387300 0a130a027631120d44656c6574654f7074696f6e73 12052a03416c6c 1a002200'); // --dry-run=server
// `kubectl create deployment zero --image=nginx --replicas=0`: gogo writes every non-pointer field, zero or not.
const DEPLOYMENT_ZERO = hex(
  '6b3873000a150a07617070732f7631120a4465706c6f796d656e7412af010a210a047a65726f12001a0022002a003200380042005a0b0a0361707012047a65726f' +
    '127c0800120d0a0b0a0361707012047a65726f1a610a1d0a0012001a0022002a003200380042005a0b0a0361707012047a65726f124012220a056e67696e78' +
    '12056e67696e782a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a' +
    '0c0800100018002000280038001a002200',
);
// `kubectl create configmap foo --from-literal=a=b`
const CONFIGMAP = hex(
  '6b387300 0a0f0a027631 1209436f6e6669674d6170 121d0a130a03666f6f12001a002200 2a0032003800420012060a01611201621a002200',
);

describe('decodeKubeProtobuf', () => {
  it('decodes DeleteOptions framed in any group version, keeping pointer zeros', () => {
    expect(decodeKubeProtobuf(DELETE_GRACE_ZERO)).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      object: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 },
    });
    expect(decodeKubeProtobuf(DELETE_DEFAULT).object).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions' });
    expect(decodeKubeProtobuf(DELETE_DRY_RUN).object).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      dryRun: ['All'],
    });
  });

  it('decodes DeleteOptions with preconditions, propagation policy and orphanDependents: false', () => {
    // meta/v1 DeleteOptions {preconditions(2){uid(1)="u-1"}, orphanDependents(3)=false, propagationPolicy(4)="Foreground"}
    const raw = Buffer.concat([ld(2, ld(1, 'u-1')), hex('1800'), ld(4, 'Foreground')]);
    const body = envelope('apps/v1', 'DeleteOptions', raw);
    expect(decodeKubeProtobuf(body).object).toEqual({
      apiVersion: 'apps/v1',
      kind: 'DeleteOptions',
      preconditions: { uid: 'u-1' },
      orphanDependents: false,
      propagationPolicy: 'Foreground',
    });
  });

  it('leaves out the zero non-pointer fields gogo writes, keeping zero pointer fields', () => {
    const { object } = decodeKubeProtobuf(DEPLOYMENT_ZERO);
    expect(object).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'zero', labels: { app: 'zero' } },
      spec: {
        replicas: 0, // *int32: explicitly zero
        selector: { matchLabels: { app: 'zero' } },
        template: {
          metadata: { labels: { app: 'zero' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] },
        },
        strategy: {},
      },
      status: {}, // DeploymentStatus.replicas etc. are plain int32: zero means unset
    });
  });

  it('decodes a policy/v1 Eviction with its DeleteOptions', () => {
    const deleteOptions = Buffer.concat([hex('0800'), ld(5, 'All')]); // gracePeriodSeconds: 0, dryRun: [All]
    const raw = Buffer.concat([ld(1, Buffer.concat([ld(1, 'web-1'), ld(3, 'ns1')])), ld(2, deleteOptions)]);
    expect(decodeKubeProtobuf(envelope('policy/v1', 'Eviction', raw)).object).toEqual({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web-1', namespace: 'ns1' },
      deleteOptions: { gracePeriodSeconds: 0, dryRun: ['All'] },
    });
  });

  it('decodes a ConfigMap', () => {
    expect(decodeKubeProtobuf(CONFIGMAP)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'foo' }, data: { a: 'b' } },
    });
  });

  it('rejects bodies without the k8s magic, truncated bodies, compressed payloads and unknown kinds', () => {
    expect(() => decodeKubeProtobuf(Buffer.from('{"kind":"DeleteOptions"}'))).toThrow(
      /expected prefix \[107 56 115 0\]/,
    );
    expect(() => decodeKubeProtobuf(DELETE_GRACE_ZERO.subarray(0, 12))).toThrow(ProtobufDecodeError);
    const gzipped = envelope('v1', 'DeleteOptions', Buffer.alloc(0), ld(3, 'gzip'));
    expect(() => decodeKubeProtobuf(gzipped)).toThrow(/contentEncoding "gzip"/);
    expect(() => decodeKubeProtobuf(envelope('v1', '', Buffer.alloc(0)))).toThrow(/no typeMeta.kind/);
    expect(() => decodeKubeProtobuf(envelope('example.io/v1', 'Widget', Buffer.alloc(0)))).toThrow(
      /no kind "Widget" is registered/,
    );
    expect(() => decodeKubeProtobuf(envelope('apps/v1beta1', 'Deployment', Buffer.alloc(0)))).toThrow(
      /for version "apps\/v1beta1"/,
    );
    // ConfigMap.metadata (field 1) sent as a varint instead of a message.
    expect(() => decodeKubeProtobuf(envelope('v1', 'ConfigMap', hex('0801')))).toThrow(
      /ConfigMap\.metadata: expected a length-delimited message/,
    );
    // ObjectMeta.name (field 1) cut short.
    expect(() => decodeKubeProtobuf(envelope('v1', 'ConfigMap', hex('0a030a0561')))).toThrow(ProtobufDecodeError);
  });
});
