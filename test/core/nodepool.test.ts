import { describe, expect, it } from 'vitest';
import { isEdgePool, type NodePool, parsePoolSpiritSpec, poolSpiritIntent } from '../../core/index.ts';

const pool = (meta: Partial<NodePool['metadata']> = {}, spec: NodePool['spec'] = {}): NodePool => ({
  apiVersion: 'apps.openyurt.io/v1beta1',
  kind: 'NodePool',
  metadata: { name: 'beijing', uid: 'uid-1', ...meta },
  spec,
});

describe('poolSpiritIntent', () => {
  it('wants a PoolSpirit for an Edge pool, named after it and owned by it', () => {
    const intent = poolSpiritIntent(pool({}, { type: 'Edge' }), {
      bundleVersion: '0.1.0',
      spec: { etcd: { storage: { sizeLimit: '1Gi' } } },
    });
    expect(intent.wanted).toBe(true);
    if (!intent.wanted) return;
    expect(intent.spec.metadata.name).toBe('beijing');
    expect(intent.spec.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'apps.openyurt.io/v1beta1',
        kind: 'NodePool',
        name: 'beijing',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(intent.spec.metadata.labels).toEqual({
      'app.kubernetes.io/managed-by': 'pool-spirit',
      'poolspirit.io/pool': 'beijing',
    });
    expect(intent.spec.spec).toEqual({
      nodePool: 'beijing',
      version: '0.1.0',
      etcd: { storage: { sizeLimit: '1Gi' } },
    });
    expect(parsePoolSpiritSpec(intent.spec.spec).ok).toBe(true);
  });

  it('does not want one for a Cloud pool or a pool with no type', () => {
    expect(poolSpiritIntent(pool({}, { type: 'Cloud' }))).toMatchObject({ wanted: false, reason: 'NotEdge' });
    expect(poolSpiritIntent(pool())).toMatchObject({
      wanted: false,
      reason: 'NotEdge',
      message: expect.stringContaining('(unset)'),
    });
  });

  it('understands both pool-type labels, case-insensitively', () => {
    expect(isEdgePool(pool({ labels: { 'nodepool.openyurt.io/type': 'edge' } }))).toBe(true);
    expect(isEdgePool(pool({ labels: { 'openyurt.io/node-pool-type': 'EDGE' } }))).toBe(true);
    expect(isEdgePool(pool({ labels: { 'nodepool.openyurt.io/type': 'cloud' } }))).toBe(false);
    // spec.type wins over a label
    expect(isEdgePool(pool({ labels: { 'nodepool.openyurt.io/type': 'edge' } }, { type: 'Cloud' }))).toBe(false);
  });

  it('honours the opt-out annotation and a pool being deleted', () => {
    expect(
      poolSpiritIntent(pool({ annotations: { 'poolspirit.io/disabled': 'true' } }, { type: 'Edge' })),
    ).toMatchObject({ wanted: false, reason: 'OptedOut' });
    expect(
      poolSpiritIntent(pool({ annotations: { 'poolspirit.io/disabled': 'false' } }, { type: 'Edge' })).wanted,
    ).toBe(true);
    expect(poolSpiritIntent(pool({ deletionTimestamp: '2026-01-01T00:00:00Z' }, { type: 'Edge' }))).toMatchObject({
      wanted: false,
      reason: 'NodePoolDeleting',
    });
  });

  it('needs the NodePool uid for the owner reference', () => {
    expect(() => poolSpiritIntent(pool({ uid: undefined }, { type: 'Edge' }))).toThrow(/uid/);
  });
});
