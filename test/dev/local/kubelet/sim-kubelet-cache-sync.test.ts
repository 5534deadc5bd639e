/**
 * The sim kubelet (playing kube-controller-manager's node lifecycle controller) acts only once all its
 * informers have synced, as controllers wait for their caches. Found by the resume test (local up after
 * kill -9): the pods listed before the nodes, a bound pod's node was not in the cache yet, and the pod was
 * evicted as if its node were gone, then recreated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeNode } from '../../../../dev/local/fleet/seed.ts';
import { SimKubelet } from '../../../../dev/local/kubelet/sim-kubelet.ts';
import { startTestCluster, type TestCluster } from '../../../support/local-cluster.ts';

type Obj = Record<string, any>;

describe('sim kubelet: nothing is done before every informer has synced', () => {
  let t: TestCluster;
  let kubelet: SimKubelet | undefined;
  beforeAll(async () => {
    t = await startTestCluster({ crds: false });
    await t.api.createJson(edgeNode('n1', 'p1'));
    await t.api.createJson({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bound', namespace: 'default' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x:1' }] },
    });
  });
  afterAll(async () => {
    await kubelet?.stop();
    await t?.stop();
  });

  it('does not evict a bound pod whose node the node informer has not listed yet', async () => {
    const before: Obj = await t.api.readJson({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bound', namespace: 'default' },
    });
    // The nodes' list answers late: the pods informer syncs first.
    t.cluster.setFaults({ rules: [{ verbs: ['list'], resources: ['nodes'], latencyMs: 700 }] });
    kubelet = new SimKubelet({ kubeConfig: t.kc, readyDelayMs: 0 });
    await kubelet.start();
    t.cluster.setFaults({ rules: [] });
    await kubelet.idle();
    expect(kubelet.stats.evictions).toBe(0);
    const after: Obj = await t.api.readJson({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bound', namespace: 'default' },
    });
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.metadata.deletionTimestamp).toBeUndefined();
  });
});
