/**
 * The stand-ins' client (dev/local/kubelet/local-client.ts) and the sim agent's use of it: the functions' small
 * HTTP client built from the kubeconfig, client-node kept for what the small client does not do, and the sim
 * agent told its PoolSpirit and ConfigMap by the pod's environment as the real agent is.
 */

import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateAgent } from '../../../../dev/local/kubelet/agent-sim.ts';
import { localKubeClient } from '../../../../dev/local/kubelet/local-client.ts';
import { startTestCluster, type TestCluster } from '../../../support/local-cluster.ts';

type Obj = Record<string, any>;

describe('localKubeClient', () => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster();
  });
  afterAll(() => t?.stop());

  const requests = (mark: number, userAgent: string | RegExp) =>
    t.cluster.requestLog
      .since(mark)
      .filter((r) => (typeof userAgent === 'string' ? r.userAgent === userAgent : userAgent.test(r.userAgent)));

  it('sends JSON through the small client, one per kubeconfig, and rejects a non-2xx with its status', async () => {
    const client = localKubeClient(t.kc);
    expect(localKubeClient(t.kc)).toBe(client);
    const mark = t.cluster.requestLog.mark();
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'lc-1', namespace: 'default' },
      data: { a: '1' },
    };
    const created: Obj = await client.requestJson('POST', '/api/v1/namespaces/default/configmaps', { body });
    expect(created.metadata.uid).toEqual(expect.any(String));
    const missing = await client.requestJson('GET', '/api/v1/namespaces/default/configmaps/none').catch((e) => e);
    expect(missing).toMatchObject({ code: 404, reason: 'NotFound' });
    expect(requests(mark, 'pool-spirit-local-sim').map((r) => `${r.verb} ${r.status}`)).toEqual([
      'create 201',
      'get 404',
    ]);
  });

  it('writes without decoding the answer: resolves to nothing once the write landed, and a refusal still rejects with its Status', async () => {
    const client = localKubeClient(t.kc);
    const path = '/api/v1/namespaces/default/configmaps';
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'lc-w', namespace: 'default' },
      data: { a: '1' },
    };
    await expect(client.write('POST', path, { body })).resolves.toBeUndefined();
    const stored: Obj = await client.requestJson('GET', `${path}/lc-w`);
    expect(stored.data).toEqual({ a: '1' });
    const again = await client.write('POST', path, { body }).catch((e) => e);
    expect(again).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    const stale = { ...stored, metadata: { ...stored.metadata, resourceVersion: '1' }, data: { a: '2' } };
    const conflict = await client.write('PUT', `${path}/lc-w`, { body: stale }).catch((e) => e);
    expect(conflict).toMatchObject({ code: 409, reason: 'Conflict' });
    // The next request on the same kept-alive connection is answered in full: the drained answer left nothing behind.
    const after: Obj = await client.requestJson('GET', `${path}/lc-w`);
    expect(after.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
  });

  it('keeps client-node for a kubeconfig the small client cannot serve (basic auth here)', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: t.cluster.url, skipTLSVerify: true }],
      users: [{ name: 'u', username: 'someone', password: 'not-used-by-the-local-api' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const mark = t.cluster.requestLog.mark();
    const got: Obj = await localKubeClient(kc).requestJson('GET', '/api/v1/namespaces/default/configmaps/lc-1');
    expect(got.data).toEqual({ a: '1' });
    expect(requests(mark, 'pool-spirit-local-sim')).toEqual([]);
    expect(requests(mark, /./)).toHaveLength(1);
  });

  it('the sim agent reports into the PoolSpirit its pod names, reading only the bootstrap ConfigMap', async () => {
    await t.api.createJson({
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: 'ps-env' },
      spec: { nodePool: 'p1' },
    });
    await t.api.createJson({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ps-env-boot', namespace: 'default', annotations: { 'poolspirit.io/bootstrap-hash': 'h1' } },
    });
    const pod = {
      metadata: { name: 'ps-env-abc', namespace: 'default', labels: { 'app.kubernetes.io/name': 'pool-spirit' } },
      spec: {
        nodeName: 'n1',
        containers: [
          {
            name: 'agent',
            env: [
              { name: 'POOLSPIRIT_NAME', value: 'ps-env' },
              { name: 'BOOTSTRAP_CONFIGMAP', value: 'ps-env-boot' },
            ],
          },
        ],
      },
    };
    const mark = t.cluster.requestLog.mark();
    expect(await simulateAgent(t.kc, pod, { simulateLeader: true })).toBe('ps-env');
    expect(
      requests(mark, 'pool-spirit-local-sim').map(
        (r) => `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}`,
      ),
    ).toEqual(['get configmaps', 'patch poolspirits/status']);
    const ps: Obj = await t.api.readJson({
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: 'ps-env' },
    });
    expect(ps.status.bootstrap.appliedHash).toBe('h1');
    expect(ps.status.leader.holder).toBe('n1');
  });
});
