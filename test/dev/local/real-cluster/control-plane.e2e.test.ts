/**
 * The local real host cluster: the built etcd, kube-apiserver, kube-controller-manager and kube-scheduler,
 * with simulated nodes played by the kubelet in `controlPlane: 'real'` mode. What is asserted is what only
 * the real components do: the scheduler binds, the controller-manager's Deployment, ReplicaSet, garbage
 * collector and kube-root-ca.crt publisher work, and the apiserver authorizes with Node,RBAC.
 */
import { readFileSync } from 'node:fs';
import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Informer } from '../../../../adapters/kubernetes/informer.ts';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { SimKubelet } from '../../../../dev/local/kubelet/sim-kubelet.ts';
import { createCertificateAuthority } from '../../../../dev/local/pki.ts';
import { type RealHostCluster, startRealHostCluster } from '../../../../dev/local/real-cluster/control-plane.ts';
import { waitFor } from '../../../support/wait.ts';

type Obj = Record<string, any>;
const NS = 'default';

function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

describe('local real host cluster', () => {
  let cluster: RealHostCluster;
  let kubelet: SimKubelet;
  let api: RawObjectApi;
  const errors: Error[] = [];

  beforeAll(async () => {
    cluster = await startRealHostCluster({ name: 'host-test', ca: await createCertificateAuthority('host-test-ca') });
    api = RawObjectApi.fromKubeConfig(cluster.kubeConfig);
    kubelet = new SimKubelet({
      kubeConfig: cluster.kubeConfig,
      controlPlane: 'real',
      readyDelayMs: 20,
      onError: (e) => errors.push(e),
    });
    await kubelet.start();
  }, 180_000);
  afterAll(async () => {
    await kubelet?.stop();
    await cluster?.stop();
  });

  it('runs each component as its own process with Node,RBAC authorization and NodeRestriction', () => {
    const apiserver = cmdline(cluster.pids['kube-apiserver']);
    expect(apiserver).toContain('--authorization-mode=Node,RBAC');
    expect(apiserver).toContain('--enable-admission-plugins=NodeRestriction');
    expect(cmdline(cluster.pids['kube-controller-manager']!)).toContain('--use-service-account-credentials=true');
    expect(cmdline(cluster.pids['kube-scheduler']!)[0]).toMatch(/kube-scheduler$/);
  });

  it('keeps a simulated node Ready: its first status and a renewed Lease in kube-node-lease', async () => {
    await api.requestJson(HttpMethod.POST, '/api/v1/nodes', {
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'edge-1', labels: { 'apps.openyurt.io/nodepool': 'hz' } },
      },
    });
    const node = await waitFor(
      async () => {
        const n = await api.requestJson<Obj>(HttpMethod.GET, '/api/v1/nodes/edge-1');
        return n.status?.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
      },
      20_000,
      'node edge-1 Ready',
    );
    expect(node.status.allocatable.pods).toBe('110');
    const lease = await waitFor(
      () =>
        api
          .requestJson<Obj>(HttpMethod.GET, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1')
          .catch(() => undefined),
      20_000,
      'node lease',
    );
    expect(lease.spec.holderIdentity).toBe('edge-1');
  }, 40_000);

  it('Deployment → ReplicaSet → Pod by the real controller-manager, bound by the real scheduler, Available, then collected', async () => {
    const labels = { app: 'web' };
    await api.requestJson(HttpMethod.POST, `/apis/apps/v1/namespaces/${NS}/deployments`, {
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: NS },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: { 'apps.openyurt.io/nodepool': 'hz' },
              containers: [{ name: 'web', image: 'nginx:1.27' }],
            },
          },
        },
      },
    });
    const deployment = await waitFor(
      async () => {
        const d = await api.requestJson<Obj>(HttpMethod.GET, `/apis/apps/v1/namespaces/${NS}/deployments/web`);
        return d.status?.availableReplicas === 1 ? d : undefined;
      },
      60_000,
      'Deployment web available',
    );
    expect(deployment.status.conditions).toContainEqual(expect.objectContaining({ type: 'Available', status: 'True' }));
    const pods = await api.requestJson<{ items: Obj[] }>(HttpMethod.GET, `/api/v1/namespaces/${NS}/pods`, {
      query: { labelSelector: 'app=web' },
    });
    expect(pods.items.map((p) => p.spec.nodeName)).toEqual(['edge-1']);
    expect(pods.items[0].metadata.ownerReferences[0].kind).toBe('ReplicaSet');

    // Foreground-free delete: the garbage collector takes the ReplicaSet, then the Pod, which the kubelet finishes.
    await api.requestJson(HttpMethod.DELETE, `/apis/apps/v1/namespaces/${NS}/deployments/web`);
    await waitFor(
      async () => {
        const [rs, left] = await Promise.all([
          api.requestJson<{ items: Obj[] }>(HttpMethod.GET, `/apis/apps/v1/namespaces/${NS}/replicasets`),
          api.requestJson<{ items: Obj[] }>(HttpMethod.GET, `/api/v1/namespaces/${NS}/pods`, {
            query: { labelSelector: 'app=web' },
          }),
        ]);
        return rs.items.length === 0 && left.items.length === 0;
      },
      60_000,
      'ReplicaSet and Pod collected',
    );
  }, 130_000);

  it('the watch cache sends bookmarks, and the informer the forwarder uses moves its resourceVersion on them', async () => {
    const informer = new Informer<Obj>(
      cluster.kubeConfig,
      {
        apiVersion: 'v1',
        kind: 'Service',
        path: '/api/v1/namespaces/kube-system/services',
        summarize: (o) => o,
        isRelevant: () => true,
      },
      { onChange: async () => undefined },
      { watchTimeoutSeconds: 8 },
    );
    void informer.run();
    try {
      await informer.hasSynced;
      const listed = Number(informer.stats.lastResourceVersion);
      // Services change in another namespace: the watch filters them out, and a bookmark carries the newer
      // resourceVersion instead (the cacher sends one 2 s before each watch's timeout).
      for (let i = 0; i < 3; i++) {
        await api.requestJson(HttpMethod.POST, '/api/v1/namespaces/default/services', {
          body: { apiVersion: 'v1', kind: 'Service', metadata: { name: `bm-${i}` }, spec: { ports: [{ port: 80 }] } },
        });
      }
      // Several watch timeouts long: on a loaded machine one watch can end before its bookmark is due.
      await waitFor(() => informer.stats.bookmarks > 0, 45_000, 'a BOOKMARK on the Service watch');
      expect(informer.stats.events).toBe(0);
      expect(Number(informer.stats.lastResourceVersion)).toBeGreaterThan(listed);
    } finally {
      informer.stop();
    }
  }, 60_000);

  it('publishes the cluster CA as kube-root-ca.crt (what the reconciler reads)', async () => {
    const cm = await waitFor(
      () =>
        api
          .requestJson<Obj>(HttpMethod.GET, `/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt`)
          .catch(() => undefined),
      30_000,
      'kube-root-ca.crt',
    );
    expect(cm.data['ca.crt'].trim()).toBe(cluster.caPem.trim());
  }, 40_000);

  it('authorizes by RBAC: an identity with no binding is refused, and a node only by the Node authorizer', async () => {
    const stranger = RawObjectApi.fromKubeConfig(kubeConfigOf(await cluster.kubeconfigFor({ user: 'stranger' })));
    await expect(stranger.requestJson(HttpMethod.GET, '/api/v1/namespaces/kube-system/secrets')).rejects.toMatchObject({
      code: 403,
    });
    const node = RawObjectApi.fromKubeConfig(
      kubeConfigOf(await cluster.kubeconfigFor({ user: 'system:node:edge-1', groups: ['system:nodes'] })),
    );
    // The Node authorizer lets a node read its own Node; NodeRestriction refuses it another node's labels.
    await expect(node.requestJson(HttpMethod.GET, '/api/v1/nodes/edge-1')).resolves.toMatchObject({
      metadata: { name: 'edge-1' },
    });
    await api.requestJson(HttpMethod.POST, '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'edge-2' } },
    });
    await expect(
      node.requestJson(HttpMethod.PATCH, '/api/v1/nodes/edge-2', {
        body: { metadata: { labels: { stolen: 'yes' } } },
        contentType: 'application/merge-patch+json',
      }),
    ).rejects.toMatchObject({ code: 403 });
    expect(errors.filter((e) => !/409|Conflict|conflict/.test(e.message))).toEqual([]);
  }, 30_000);

  it('NodeRestriction refuses a node the YurtHub leader Lease kube-system/yurthub even when RBAC grants it (why a pool-spirit runs RBAC alone)', async () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    await api.requestJson(HttpMethod.POST, `${rbac}/clusterroles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'leases-writer' },
        rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
      },
    });
    await api.requestJson(HttpMethod.POST, `${rbac}/clusterrolebindings`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'leases-writer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'leases-writer' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
      },
    });
    const node = RawObjectApi.fromKubeConfig(
      kubeConfigOf(await cluster.kubeconfigFor({ user: 'system:node:edge-1', groups: ['system:nodes'] })),
    );
    const lease = (namespace: string, name: string) => ({
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: { holderIdentity: 'edge-1' },
      },
    });
    const refused = await node
      .requestJson(
        HttpMethod.POST,
        '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases',
        lease('kube-system', 'yurthub'),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toMatchObject({ code: 403 });
    expect(JSON.stringify((refused as { body?: unknown }).body ?? (refused as Error).message)).toContain(
      'can only access leases in the',
    );
    // Its own node Lease is what NodeRestriction allows (the kubelet's heartbeat); another node's is refused.
    const own = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1';
    const current = await node.requestJson<Obj>(HttpMethod.GET, own);
    await expect(
      node.requestJson(HttpMethod.PUT, own, {
        body: { ...current, spec: { ...current.spec, renewTime: new Date().toISOString().replace('Z', '000Z') } },
      }),
    ).resolves.toBeDefined();
    await expect(
      node.requestJson(
        HttpMethod.POST,
        '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
        lease('kube-node-lease', 'edge-2'),
      ),
    ).rejects.toMatchObject({ code: 403 });
  }, 30_000);
});

function kubeConfigOf(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}
