/**
 * The forwarder judged by the real kube-apiserver, as its own identity with the shipped RBAC: list and
 * watch of every kind it watches is allowed (and nothing else), changes become notices, and a watch that
 * resumes from a compacted revision gets the real 410 Gone and relists without losing a change.
 *
 * Watches are served from etcd here (`--watch-cache=false`): with the watch cache a resume from a
 * compacted revision is still answered from the cache's window, and the 410 path would not run.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { edgeNode, nodePool, PRODUCT_NAMESPACE, seedCluster } from '../../dev/local/fleet/seed.ts';
import { kubeBinaryPath } from '../../dev/local/kube-bins/index.ts';
import { createCertificateAuthority } from '../../dev/local/pki.ts';
import { type RealHostCluster, startRealHostCluster } from '../../dev/local/real-cluster/control-plane.ts';
import { installProduct, writeIdentityKubeconfigs } from '../../dev/local/real-cluster/install.ts';
import { type ChangeNotice, changeNoticeDetailSchema } from '../../events/index.ts';
import { Forwarder } from '../../forwarder/forwarder.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);

describe('forwarder on the real kube-apiserver, as its own identity', () => {
  let cluster: RealHostCluster;
  let forwarder: Forwarder;
  let admin: RawObjectApi;
  let dir: string;
  const received: ChangeNotice[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-real-forwarder-'));
    const ca = await createCertificateAuthority('real-forwarder-ca');
    cluster = await startRealHostCluster({ name: 'forwarder', ca, extraApiServerArgs: ['--watch-cache=false'] });
    await installProduct(cluster.kubeConfig);
    await seedCluster(cluster.kubeConfig, { pools: 0, nodesPerPool: 0, cloudPools: 0 }, ca.certPem);
    admin = RawObjectApi.fromKubeConfig(cluster.kubeConfig);
    const identities = await writeIdentityKubeconfigs(cluster, dir, 'forwarder');
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(identities.forwarder);
    const bus = {
      putEvents: async (entries: PutEventsRequestEntry[]) => {
        for (const e of entries) received.push(changeNoticeDetailSchema.parse(JSON.parse(e.Detail!)));
        return entries.map((_, i) => ({ EventId: `e-${received.length}-${i}` }));
      },
    };
    // Short watches: each one ends after a second and resumes from the last revision it saw.
    forwarder = new Forwarder({
      clusterId: 'real',
      kubeConfig,
      bus,
      namespace: PRODUCT_NAMESPACE,
      sender: { coalesceWindowMs: 20 },
      watchTimeoutSeconds: 1,
    });
    forwarder.start();
    await forwarder.synced();
  }, 180_000);
  afterAll(async () => {
    await forwarder?.stop(2_000);
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists and watches every kind with nothing but its shipped grant, and sends a notice per change', async () => {
    const stats = forwarder.stats();
    // Every informer listed (a 403 would have kept it from syncing) and none was refused since.
    expect(Object.keys(stats.informers).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'Node',
      'NodePool',
      'Pod',
      'PoolSpirit',
      'Secret',
      'Service',
      'ServiceAccount',
    ]);
    expect(
      Object.entries(stats.informers).filter(([, s]) => s.lists < 1 || /forbidden|403/i.test(s.lastError ?? '')),
    ).toEqual([]);
    await admin.createJson(nodePool('real-a', 'Edge'));
    await waitFor(
      () => received.some((n) => n.kind === 'NodePool' && n.name === 'real-a'),
      10_000,
      'the NodePool notice',
    );
    await admin.createJson(edgeNode('real-a-node-0', 'real-a'));
    await waitFor(
      () => received.some((n) => n.kind === 'Node' && n.name === 'real-a-node-0'),
      10_000,
      'the Node notice',
    );
  }, 30_000);

  it('resumes from a compacted revision: the real 410 Gone, a relist, and no change lost', async () => {
    const before = forwarder.stats().informers.NodePool!;
    // A NodePool change, then writes it does not watch move the revision past it, then a compaction to the
    // head: whatever the NodePool watch saw last is now compacted away, so its next resume is a 410.
    await admin.createJson(nodePool('real-b', 'Edge'));
    for (let i = 0; i < 5; i++) {
      await admin.requestJson(HttpMethod.POST, '/api/v1/namespaces/default/configmaps', {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `noise-${i}` } },
      });
    }
    const status = JSON.parse(
      (await run(kubeBinaryPath('etcdctl'), ['--endpoints', cluster.etcdEndpoint, 'endpoint', 'status', '-w', 'json']))
        .stdout,
    ) as Array<{ Status: { header: { revision: number } } }>;
    await run(kubeBinaryPath('etcdctl'), [
      '--endpoints',
      cluster.etcdEndpoint,
      'compact',
      String(status[0]!.Status.header.revision),
    ]);
    await waitFor(
      () => forwarder.stats().informers.NodePool!.gone410 > before.gone410,
      20_000,
      'a 410 on the NodePool watch',
    );
    await waitFor(() => forwarder.stats().informers.NodePool!.lists > before.lists, 10_000, 'the relist after it');
    await waitFor(
      () => received.some((n) => n.kind === 'NodePool' && n.name === 'real-b'),
      10_000,
      'the NodePool created across the 410',
    );
  }, 40_000);
});
