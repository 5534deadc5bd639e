/**
 * The fleet's progress tracker counts the same whether it watches over HTTP or reads its local API's
 * in-process caches (decision 0036): wanted Edge pools, Available and failing PoolSpirits, kept current.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpMethod } from '@kubernetes/client-node';
import { ClusterProgressTracker } from '../../../local/fleet/cluster-progress.ts';
import { nodePool } from '../../../local/fleet/seed.ts';
import { startTestCluster, waitFor, type TestCluster } from '../../support/local-cluster.ts';

const SPIRITS = '/apis/poolspirit.io/v1alpha1/poolspirits';

describe('ClusterProgressTracker', () => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster();
  });
  afterAll(() => t?.stop());

  const spirit = (name: string) => ({
    apiVersion: 'poolspirit.io/v1alpha1',
    kind: 'PoolSpirit',
    metadata: { name },
    spec: { nodePool: name },
  });
  const condition = (status: 'True' | 'False') => ({
    type: 'Available',
    status,
    reason: status === 'True' ? 'Running' : 'InvalidSpec',
    message: 'set by the test',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  });
  const setStatus = (name: string, status: object) =>
    t.api.requestJson(HttpMethod.PATCH, `${SPIRITS}/${name}/status`, {
      body: { status },
      contentType: 'application/merge-patch+json',
    });

  it('counts the same through HTTP watches and through the in-process caches, and follows changes', async () => {
    await t.api.createJson(nodePool('edge-a', 'Edge'));
    await t.api.createJson(nodePool('cloud-b', 'Cloud'));
    await t.api.createJson(spirit('edge-a'));
    const overHttp = new ClusterProgressTracker(t.kc);
    const inProcess = new ClusterProgressTracker(t.kc, t.cluster.objectCaches);
    await Promise.all([overHttp.start(), inProcess.start()]);
    try {
      expect(inProcess.current()).toEqual({ wanted: 1, available: 0, failing: 0 });
      expect(overHttp.current()).toEqual(inProcess.current());

      await t.api.createJson(nodePool('edge-c', 'Edge'));
      await t.api.createJson(spirit('edge-c'));
      await setStatus('edge-a', { phase: 'Running', conditions: [condition('True')] });
      await setStatus('edge-c', { phase: 'Invalid', conditions: [condition('False')] });
      const after = { wanted: 2, available: 1, failing: 1 };
      await waitFor(
        () => JSON.stringify([overHttp.current(), inProcess.current()]) === JSON.stringify([after, after]),
        5_000,
        'both trackers to count the new pool and the two statuses',
      );

      await t.api.requestJson(HttpMethod.DELETE, `${SPIRITS}/edge-a`);
      await t.api.requestJson(HttpMethod.DELETE, '/apis/apps.openyurt.io/v1beta1/nodepools/edge-c');
      const gone = { wanted: 1, available: 0, failing: 1 };
      await waitFor(
        () => JSON.stringify([overHttp.current(), inProcess.current()]) === JSON.stringify([gone, gone]),
        5_000,
        'both trackers to drop the deleted PoolSpirit and NodePool',
      );
    } finally {
      overHttp.stop();
      inProcess.stop();
    }
  });
});
