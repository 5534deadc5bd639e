import { describe, expect, it } from 'vitest';
import { describeForeignWrites, foreignCertsWrites } from '../../../core/yurt-coordinator/index.ts';

const secret = (managedFields: unknown) => ({
  metadata: { name: 'yurt-coordinator-yurthub-certs', namespace: 'kube-system', managedFields },
});
const entry = (manager: string, keys: string[], extra: Record<string, unknown> = {}) => ({
  manager,
  operation: 'Update',
  time: '2026-12-06T03:00:00Z',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:data': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) },
  ...extra,
});

describe('foreignCertsWrites', () => {
  it('names every other manager owning a key the product renders, with the keys it owns', () => {
    const writes = foreignCertsWrites(
      secret([
        entry('pool-spirit-reconciler', ['ca.crt', 'yurt-coordinator-yurthub-client.crt']),
        entry('yurt-manager', ['ca.crt', 'yurt-coordinator-yurthub-client.key']),
      ]),
      'pool-spirit-reconciler',
    );
    expect(writes).toEqual([
      {
        manager: 'yurt-manager',
        operation: 'Update',
        time: '2026-12-06T03:00:00Z',
        keys: ['ca.crt', 'yurt-coordinator-yurthub-client.key'],
      },
    ]);
    expect(describeForeignWrites(writes)).toBe(
      'yurt-manager (Update, 2026-12-06T03:00:00Z): ca.crt, yurt-coordinator-yurthub-client.key',
    );
  });

  it("leaves alone the operator's node-lease-proxy keys, the install's empty Secret and status writes", () => {
    expect(
      foreignCertsWrites(
        secret([
          entry('node-lease-proxy-install', ['node-lease-proxy-client.crt', 'node-lease-proxy-client.key']),
          { manager: 'operator', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:labels': {} } } },
          entry('someone', ['ca.crt'], { subresource: 'status' }),
        ]),
        'pool-spirit-reconciler',
      ),
    ).toEqual([]);
  });

  it('reads nothing into entries of another shape', () => {
    expect(foreignCertsWrites(secret('not a list'), 'x')).toEqual([]);
    expect(
      foreignCertsWrites(secret([null, { manager: 3 }, { manager: 'm', fieldsV1: { 'f:data': 'x' } }]), 'x'),
    ).toEqual([]);
  });
});
