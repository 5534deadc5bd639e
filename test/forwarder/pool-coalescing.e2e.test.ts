import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeNode, nodePool } from '../../dev/local/fleet/seed.ts';
import { coalescingKey } from '../../forwarder/forwarder.ts';
import { type ForwarderOnLocalBus, startForwarderOnLocalBus } from '../support/forwarder-on-local-bus.ts';
import { type TestClusterAccess, waitFor } from '../support/local-cluster.ts';
import { startRealTestCluster } from '../support/real-cluster.ts';

describe('coalescing key', () => {
  it('is the pool when the change names one, else the object', () => {
    expect(coalescingKey('c1', 'Node', 'n1', 'p1')).toBe(coalescingKey('c1', 'Deployment', 'ns/d', 'p1'));
    expect(coalescingKey('c1', 'Node', 'n1', 'p1')).not.toBe(coalescingKey('c2', 'Node', 'n1', 'p1'));
    expect(coalescingKey('c1', 'Node', 'n1', 'p1')).not.toBe(coalescingKey('c1', 'Node', 'n1', 'p2'));
    expect(coalescingKey('c1', 'Node', 'n1')).not.toBe(coalescingKey('c1', 'Node', 'n2'));
  });
});

/**
 * The reconcile function reads a whole pool whatever a notice names, so the changes of one pool that arrive
 * within the coalescing window go to the bus as one notice: its last change.
 */
describe('forwarder: one notice per pool per coalescing window', () => {
  let t: TestClusterAccess;
  let stack: ForwarderOnLocalBus;

  beforeAll(async () => {
    t = await startRealTestCluster({ name: 'coalescing', controllers: false });
    stack = await startForwarderOnLocalBus({
      kubeConfig: t.kc,
      clusterId: 'merging',
      // Long enough that the writes below, made back to back, all land in one window.
      forwarder: { sender: { coalesceWindowMs: 1_500 } },
    });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await t?.stop();
  });

  it('merges a pool’s NodePool and Node changes, and keeps other pools apart', async () => {
    await t.api.create(nodePool('east', 'Edge'));
    await t.api.create(edgeNode('east-1', 'east'));
    await t.api.create(edgeNode('east-2', 'east'));
    await t.api.create(nodePool('west', 'Edge'));
    const { forwarder, bus, received } = stack;
    await waitFor(() => new Set(received.map((n) => n.poolName)).size === 2, 20_000, 'notices of both pools');
    await forwarder.idle();
    await bus.drain();

    const byPool = (pool: string) => received.filter((n) => n.poolName === pool);
    expect(byPool('east')).toHaveLength(1);
    expect(byPool('west')).toHaveLength(1);
    // The notice carries the pool's last change in the window.
    expect(byPool('east')[0]).toMatchObject({ kind: 'Node', name: 'east-2', changeType: 'ADDED' });
    expect(forwarder.stats().sender).toMatchObject({ received: 4, coalesced: 2, sent: 2 });
  });
});
