/**
 * The sim kubelet reports a pod that became Ready (onPodReady: the sim agent's bootstrap report) until the
 * report succeeds. Found by the chaos soak: with the API refusing writes for a moment, the report failed
 * after the pod's Ready status was written, the pod was never reported again, and its pool stayed
 * "the agent has not reported a bootstrap yet" for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeNode } from '../../../../dev/local/fleet/seed.ts';
import { SimKubelet } from '../../../../dev/local/kubelet/sim-kubelet.ts';
import { startTestCluster, type TestCluster, waitFor } from '../../../support/local-cluster.ts';

describe('sim kubelet: a failed ready report is retried', () => {
  let t: TestCluster;
  let kubelet: SimKubelet;
  const reports: { pod: string; ok: boolean }[] = [];

  beforeAll(async () => {
    t = await startTestCluster({ crds: false });
    await t.api.createJson(edgeNode('n1', 'p1'));
    let failuresLeft = 2;
    kubelet = new SimKubelet({
      kubeConfig: t.kc,
      readyDelayMs: 10,
      onPodReady: async (pod) => {
        const ok = failuresLeft-- <= 0;
        reports.push({ pod: pod.metadata.name, ok });
        if (!ok) throw new Error('the API refused the report (500)');
      },
    });
    await kubelet.start();
  });

  afterAll(async () => {
    await kubelet?.stop();
    await t?.stop();
  });

  it('calls onPodReady again after it threw, until it succeeds, and then no more', async () => {
    await t.api.createJson({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    await waitFor(() => reports.some((r) => r.ok), 10_000, 'a successful ready report');
    expect(reports.map((r) => r.ok)).toEqual([false, false, true]);
    expect(new Set(reports.map((r) => r.pod)).size).toBe(1);
    // Later syncs of the same Ready pod (a node change re-queues every pod) do not report it again.
    await t.api.createJson(edgeNode('n2', 'p1'));
    await waitFor(() => kubelet.nodes.get('n2') !== undefined, 5_000, 'the kubelet to see node n2');
    await kubelet.idle();
    expect(reports.filter((r) => r.ok)).toHaveLength(1);
  });
});
