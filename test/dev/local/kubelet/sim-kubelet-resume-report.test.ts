/**
 * A resumed cluster's Ready pods are reported again (the sim agent restarts with the stack) through the sim
 * kubelet's queue. Found by a long soak: on a restart from the state dir, re-reporting a Ready pod whose
 * bootstrap ConfigMap had been deleted failed the whole start (`configmaps "ps-pool-08-bootstrap" not found`),
 * five times in a row, so the stack could not resume. Now the report is retried until it succeeds and the
 * start does not wait for it.
 */

import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { edgeNode } from '../../../../dev/local/fleet/seed.ts';
import { podReady, SimKubelet } from '../../../../dev/local/kubelet/sim-kubelet.ts';
import { startTestCluster, type TestCluster, waitFor } from '../../../support/local-cluster.ts';

const CONFIG_MAP = 'ps-p1-bootstrap';

describe('sim kubelet: a resumed cluster reports its Ready pods again, through its queue', () => {
  let t: TestCluster;
  let api: RawObjectApi;
  const kubelets: SimKubelet[] = [];
  const reports: { pod: string; ok: boolean; by: number }[] = [];
  /** As the sim agent does (dev/local/kubelet/agent-sim.ts): the report reads the pool's bootstrap ConfigMap. */
  const kubelet = (by: number) =>
    new SimKubelet({
      kubeConfig: t.kc,
      readyDelayMs: 10,
      onPodReady: async (pod) => {
        try {
          await api.requestJson(HttpMethod.GET, `/api/v1/namespaces/default/configmaps/${CONFIG_MAP}`);
        } catch (err) {
          reports.push({ pod: pod.metadata.name, ok: false, by });
          throw err;
        }
        reports.push({ pod: pod.metadata.name, ok: true, by });
      },
    });
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CONFIG_MAP, namespace: 'default' },
    data: { bootstrap: 'x' },
  };

  beforeAll(async () => {
    t = await startTestCluster({ crds: false });
    api = RawObjectApi.fromKubeConfig(t.kc);
    await t.api.createJson(edgeNode('n1', 'p1'));
    await t.api.createJson(configMap);
    // The first stack: its pod becomes Ready and is reported.
    const first = kubelet(1);
    kubelets.push(first);
    await first.start();
    await t.api.createJson({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ps-p1', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'p1' } },
        template: { metadata: { labels: { app: 'p1' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    await waitFor(() => reports.some((r) => r.ok && r.by === 1), 10_000, 'the first report');
    await first.stop();
  });

  afterAll(async () => {
    for (const k of kubelets) await k.stop();
    await t?.stop();
  });

  it('does not fail the start when a report fails, retries it, and reports once it can', async () => {
    // Before the restart the soak deleted the pool's bootstrap ConfigMap (the reconciler puts it back later).
    await t.api.delete(configMap);
    const resumed = kubelet(2);
    kubelets.push(resumed);
    await resumed.start();
    expect([...resumed.pods.snapshot().values()].filter(podReady)).toHaveLength(1);
    // Neither throws nor waits for the report.
    expect(resumed.reportReadyAgain()).toBe(1);
    await waitFor(() => reports.filter((r) => r.by === 2 && !r.ok).length >= 2, 10_000, 'the failed report retried');
    expect(reports.some((r) => r.by === 2 && r.ok)).toBe(false);

    await t.api.createJson(configMap);
    await waitFor(() => reports.some((r) => r.by === 2 && r.ok), 10_000, 'the report once the ConfigMap is back');
    // Reported once, and no more after that (a node change re-queues every pod).
    await t.api.createJson(edgeNode('n2', 'p1'));
    await waitFor(() => resumed.nodes.get('n2') !== undefined, 5_000, 'the kubelet to see node n2');
    await resumed.idle();
    expect(reports.filter((r) => r.by === 2 && r.ok)).toHaveLength(1);
  });
});
