import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { CoreV1Api, PatchStrategy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeNode, nodePool } from '../../dev/local/fleet/seed.ts';
import type { ChangeNotice } from '../../events/index.ts';
import { entrySize, MAX_BYTES_PER_CALL, MAX_ENTRIES_PER_CALL } from '../../forwarder/entry-size.ts';
import type { Forwarder } from '../../forwarder/forwarder.ts';
import { type ForwarderOnLocalBus, startForwarderOnLocalBus } from '../support/forwarder-on-local-bus.ts';
import { startTestCluster, type TestCluster, waitFor } from '../support/local-cluster.ts';

/**
 * The forwarder against a flaky apiserver (watches dropped, 500s on list/watch, a compaction forcing 410)
 * and a bus that fails entries: every change must still reach the bus, none lost, within PutEvents limits.
 */
describe('forwarder under faults', () => {
  let t: TestCluster;
  let forwarder: Forwarder;
  let stack: ForwarderOnLocalBus;
  let received: ChangeNotice[];
  const batches: PutEventsRequestEntry[][] = [];
  const failedOnce = new Set<string>();

  beforeAll(async () => {
    t = await startTestCluster({
      faults: {
        seed: 7,
        rules: [
          { verbs: ['watch'], watchDropAfterMs: 400 },
          { verbs: ['list', 'watch'], resources: ['nodepools', 'nodes'], errorRate: 0.15, errorStatus: 500 },
        ],
      },
    });
    stack = await startForwarderOnLocalBus({
      kubeConfig: t.kc,
      clusterId: 'flaky',
      bus: {
        retry: { baseDelayMs: 5 },
        // Every third entry fails the first time it is sent, as EventBridge does under throttling.
        injectEntryFailure: (entry) => {
          const key = String(entry.Detail);
          if (failedOnce.has(key) || key.length % 3 !== 0) return null;
          failedOnce.add(key);
          return { code: 'ThrottlingException', message: 'Rate exceeded' };
        },
      },
      port: (sdk) => ({
        putEvents: async (entries) => {
          batches.push(entries);
          return sdk.putEvents(entries);
        },
      }),
      forwarder: {
        sender: { coalesceWindowMs: 20, initialRetryDelayMs: 10, maxRetryDelayMs: 200 },
        watchTimeoutSeconds: 30,
      },
    });
    ({ forwarder, received } = stack);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await t?.stop();
  });

  const lastNotice = (kind: string, name: string) => received.filter((n) => n.kind === kind && n.name === name).at(-1);

  it('delivers every change at least once despite drops, 500s, 410 and failed entries', async () => {
    const pools = Array.from({ length: 24 }, (_, i) => nodePool(`p${i}`, i % 4 === 0 ? 'Cloud' : 'Edge'));
    for (const p of pools) await t.api.create(p);
    for (const p of pools.slice(0, 8))
      await t.api.patch(
        { ...p, metadata: { name: p.metadata!.name, labels: { touched: 'yes' } } } as any,
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.MergePatch,
      );
    for (const p of pools.slice(20)) await t.api.delete(p);

    // Force a 410: writes the forwarder does not watch move the revision on (as in any busy cluster), then
    // a compaction drops the history its NodePool watch would resume from.
    for (let i = 0; i < 5; i++)
      await t.api.createJson({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `noise-${i}`, namespace: 'default' },
      } as any);
    await t.cluster.storage.compact(await t.cluster.storage.currentRevision());

    const live = await Promise.all(pools.slice(0, 20).map((p) => t.api.read(p as any)));
    await waitFor(
      () =>
        live.every(
          (p) =>
            Number(lastNotice('NodePool', p.metadata!.name!)?.resourceVersion) >= Number(p.metadata!.resourceVersion),
        ),
      30_000,
      'latest version of every pool on the bus',
    );
    await waitFor(
      () =>
        pools.slice(20).every((p) => received.some((n) => n.name === p.metadata!.name && n.changeType === 'DELETED')),
      30_000,
      'deletions on the bus',
    );
    await forwarder.idle();

    const stats = forwarder.stats();
    expect(stats.sender.failedEntryAttempts).toBeGreaterThan(0);
    // The injected drop ends each watch after 400 ms: the informer must have resumed at least once.
    await waitFor(() => forwarder.stats().informers.NodePool.watchesStarted > 1, 10_000, 'a resumed watch');
    expect(received.every((n) => n.clusterId === 'flaky')).toBe(true);
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(MAX_ENTRIES_PER_CALL);
      expect(batch.reduce((n, e) => n + entrySize(e), 0)).toBeLessThanOrEqual(MAX_BYTES_PER_CALL);
    }
  });

  it('sends a resync notice for every pool after a relist', async () => {
    await waitFor(() => forwarder.stats().informers.NodePool.lists >= 2, 30_000, 'a relist after 410');
    expect(forwarder.stats().informers.NodePool.gone410).toBeGreaterThan(0);
    const remaining = (await t.api.list('apps.openyurt.io/v1beta1', 'NodePool')).items.map((p) => p.metadata!.name!);
    await waitFor(
      () => remaining.every((name) => received.some((n) => n.name === name && n.changeType === 'RESYNC')),
      30_000,
      'RESYNC notices',
    );
  });

  it('forwards node pool membership and readiness, never heartbeats', async () => {
    const core = t.kc.makeApiClient(CoreV1Api);
    const node = edgeNode('edge-1', 'p1');
    await t.api.create(node);
    await waitFor(() => lastNotice('Node', 'edge-1'), 20_000, 'node added notice');
    await forwarder.idle();
    const before = received.filter((n) => n.kind === 'Node').length;

    const heartbeat = async () => {
      const live: any = await core.readNode({ name: 'edge-1' });
      live.status.conditions[0].lastHeartbeatTime = new Date().toISOString();
      await core.replaceNodeStatus({ name: 'edge-1', body: live });
    };
    await heartbeat();
    await heartbeat();
    const live: any = await core.readNode({ name: 'edge-1' });
    live.metadata.labels['apps.openyurt.io/nodepool'] = 'p2';
    await core.replaceNode({ name: 'edge-1', body: live });
    await waitFor(
      () => received.some((n) => n.kind === 'Node' && n.poolName === 'p2'),
      20_000,
      'membership change notice',
    );
    await forwarder.idle();
    const nodeNotices = received.filter((n) => n.kind === 'Node').slice(before);
    // One notice for the pool it joined, one for the pool it left; the heartbeats sent nothing.
    expect(nodeNotices.map((n) => n.poolName).sort()).toEqual(['p1', 'p2']);
  });
});
