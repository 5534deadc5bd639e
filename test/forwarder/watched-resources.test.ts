import { describe, expect, it } from 'vitest';
import { watchedResources } from '../../forwarder/watched-resources.ts';

const byKind = (kind: string) => watchedResources('pool-spirit-system').find((r) => r.kind === kind)!;

describe('which changes become notices', () => {
  it('skips a PoolSpirit change that only touched reconciler-owned status', () => {
    const r = byKind('PoolSpirit');
    const base = { metadata: { name: 'p', uid: 'u', resourceVersion: '1', generation: 1 }, spec: { nodePool: 'p' }, status: { conditions: [] } };
    const before = r.summarize(base);
    const ownStatus = r.summarize({ ...base, metadata: { ...base.metadata, resourceVersion: '2' }, status: { conditions: [{ type: 'Available', status: 'True' }] } });
    const specEdit = r.summarize({ ...base, metadata: { ...base.metadata, resourceVersion: '3', generation: 2 } });
    const agentReport = r.summarize({ ...base, metadata: { ...base.metadata, resourceVersion: '4' }, status: { bootstrap: { appliedHash: 'h' } } });
    expect(r.isRelevant(before, ownStatus)).toBe(false);
    expect(r.isRelevant(before, specEdit)).toBe(true);
    expect(r.isRelevant(before, agentReport)).toBe(true);
  });

  it('forwards Node membership and readiness changes, not heartbeats', () => {
    const r = byKind('Node');
    const node = (pool: string, ready: string, rv: string) => ({
      metadata: { name: 'n', uid: 'u', resourceVersion: rv, labels: { 'apps.openyurt.io/nodepool': pool } },
      status: { conditions: [{ type: 'Ready', status: ready, lastHeartbeatTime: rv }] },
    });
    const before = r.summarize(node('a', 'True', '1'));
    expect(r.isRelevant(before, r.summarize(node('a', 'True', '2')))).toBe(false);
    expect(r.isRelevant(before, r.summarize(node('a', 'False', '3')))).toBe(true);
    expect(r.isRelevant(before, r.summarize(node('b', 'True', '4')))).toBe(true);
  });
});
