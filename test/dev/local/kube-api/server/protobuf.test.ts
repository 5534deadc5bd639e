import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeKubeProtobuf as decodeKubernetesProtobuf } from '../../../../../dev/local/kube-api/protobuf/decode.ts';
import { backends, startTestCluster, type TestCluster } from './harness.ts';

// Request bodies captured from kubectl 1.32 (`kubectl create configmap foo --from-literal=a=b`,
// `kubectl create deployment d2 -n foo --image=nginx --replicas=2`), which always sends protobuf.
const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const CONFIGMAP = hex(
  '6b387300 0a0f0a027631 1209436f6e6669674d6170 121d0a130a03666f6f12001a002200 2a0032003800420012060a01611201621a002200',
);
const DEPLOYMENT = hex(`
  6b 38 73 00 0a 15 0a 07 61 70 70 73 2f 76 31 12 0a 44 65 70 6c 6f 79 6d 65 6e 74 12 aa 01 0a 20
  0a 02 64 32 12 00 1a 03 66 6f 6f 22 00 2a 00 32 00 38 00 42 00 5a 09 0a 03 61 70 70 12 02 64 32
  12 78 08 02 12 0b 0a 09 0a 03 61 70 70 12 02 64 32 1a 5f 0a 1b 0a 00 12 00 1a 00 22 00 2a 00 32
  00 38 00 42 00 5a 09 0a 03 61 70 70 12 02 64 32 12 40 12 22 0a 05 6e 67 69 6e 78 12 05 6e 67 69
  6e 78 2a 00 42 00 6a 00 72 00 80 01 00 88 01 00 90 01 00 a2 01 00 1a 00 32 00 42 00 4a 00 52 00
  58 00 60 00 68 00 82 01 00 8a 01 00 9a 01 00 c2 01 00 22 02 0a 00 28 00 38 00 1a 0c 08 00 10 00
  18 00 20 00 28 00 38 00 1a 00 22 00`);

describe('Kubernetes protobuf request bodies', () => {
  it('decodes the runtime.Unknown envelope and the object, dropping zero-valued non-pointer fields', () => {
    expect(decodeKubernetesProtobuf(CONFIGMAP).object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'foo' },
      data: { a: 'b' },
    });
    const d = decodeKubernetesProtobuf(DEPLOYMENT).object as any;
    expect(d.metadata).toEqual({ name: 'd2', namespace: 'foo', labels: { app: 'd2' } });
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.selector).toEqual({ matchLabels: { app: 'd2' } });
    expect(d.spec.template.spec.containers).toEqual([{ name: 'nginx', image: 'nginx', resources: {} }]);
  });

  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster(backends[0]);
  });
  afterAll(() => t?.stop());

  it('creates objects from protobuf bodies, answering in JSON', async () => {
    const res = await t.raw('POST', '/api/v1/namespaces/default/configmaps', CONFIGMAP, {
      'Content-Type': 'application/vnd.kubernetes.protobuf',
      Accept: 'application/vnd.kubernetes.protobuf,application/json',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'foo', namespace: 'default' },
      data: { a: 'b' },
    });
  });

  it('rejects a garbled protobuf body with 400', async () => {
    const res = await t.raw('POST', '/api/v1/namespaces/default/configmaps', CONFIGMAP.subarray(0, 20), {
      'Content-Type': 'application/vnd.kubernetes.protobuf',
    });
    expect(res.status).toBe(400);
    expect(res.json.reason).toBe('BadRequest');
  });
});
