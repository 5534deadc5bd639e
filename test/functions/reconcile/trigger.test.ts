import { describe, expect, it } from 'vitest';
import { parseTrigger } from '../../../functions/reconcile/trigger.ts';

const envelope = {
  version: '0',
  id: 'ev-1',
  account: '000000000000',
  time: '2026-01-01T00:00:00Z',
  region: 'eu-west-1',
  resources: [],
};
const notice = (detail: Record<string, unknown>) => ({
  ...envelope,
  source: 'pool-spirit.forwarder',
  'detail-type': 'Cluster Change Notice',
  detail: {
    clusterId: 'c1',
    uid: 'u',
    resourceVersion: '7',
    changeType: 'MODIFIED',
    observedAt: '2026-01-01T00:00:00Z',
    ...detail,
  },
});

describe('reconcile trigger', () => {
  it('takes the key from a reconcile request', () => {
    expect(
      parseTrigger({
        ...envelope,
        source: 'pool-spirit.reconciler',
        'detail-type': 'Reconcile Request',
        detail: { clusterId: 'c1', nodePool: 'edge-a', reason: 'audit-drift', requestedBy: 'audit' },
      }),
    ).toEqual({
      clusterId: 'c1',
      nodePool: 'edge-a',
      eventId: 'ev-1',
      // The bus's time: what a later pass is compared with (docs/decisions/0026).
      acceptedAt: Date.parse('2026-01-01T00:00:00Z'),
      reason: 'audit-drift',
    });
  });

  it('takes the key from a change notice: poolName, or the name of a NodePool', () => {
    expect(
      parseTrigger(
        notice({ kind: 'Deployment', namespace: 'pool-spirit-system', name: 'ps-edge-a', poolName: 'edge-a' }),
      ),
    ).toMatchObject({ nodePool: 'edge-a', reason: 'change-notice:Deployment:MODIFIED' });
    expect(parseTrigger(notice({ kind: 'NodePool', name: 'edge-b' }))).toMatchObject({ nodePool: 'edge-b' });
  });

  it('names the missing field: a non-NodePool notice without poolName, a request without nodePool', () => {
    expect(() => parseTrigger(notice({ kind: 'Node', name: 'n1' }))).toThrow(
      /detail\.poolName: required for a Node change notice/,
    );
    expect(() =>
      parseTrigger({
        ...envelope,
        source: 'pool-spirit.reconciler',
        'detail-type': 'Reconcile Request',
        detail: { clusterId: 'c1', reason: 'x', requestedBy: 'y' },
      }),
    ).toThrow(/detail\.nodePool/);
    expect(() => parseTrigger({ ...envelope, source: 'x', 'detail-type': 'Something Else', detail: {} })).toThrow(
      /detail-type/,
    );
    expect(() => parseTrigger('{not json')).toThrow(/not valid JSON/);
  });
});
