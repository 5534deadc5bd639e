/**
 * The product on OpenYurt's own NodePool CRD, per supported release, on the real control plane: the CRDs come
 * from the release's Go module (charts/yurt-manager/crds, `npm run kube-bins`), and each release runs its own
 * yurt-manager (dev/local/openyurt), as a real cluster does: its webhooks default and validate the pools and
 * nodes seeded, and it serves NodePool conversion.
 *  - v1.5.1 stores v1beta1; a read at v1alpha1 goes through yurt-manager's conversion.
 *  - v1.7.0 stores v1beta2; reads and writes at v1beta1 go through yurt-manager's conversion (a pool created at
 *    v1beta1 is converged by the product from what was stored), and with yurt-manager stopped only the stored
 *    version still answers: the product keeps reading it.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { ApiException, HttpMethod, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { getCluster } from '../../../adapters/state-table/index.ts';
import { objectNames } from '../../../core/render/names.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { edgeNode, PRODUCT_NAMESPACE } from '../../../dev/local/fleet/seed.ts';
import type { OpenYurtRelease } from '../../../dev/local/kube-bins/index.ts';
import { DEFAULT_CONTROLLERS, type RunningYurtManager } from '../../../dev/local/openyurt/yurt-manager.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../../events/index.ts';
import { auditDeps, auditNow } from '../../../functions/audit/handler.ts';
import { waitFor } from '../../support/wait.ts';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
}
interface Crd {
  spec: {
    versions: CrdVersion[];
    conversion?: {
      strategy?: string;
      webhook?: { clientConfig?: { url?: string; service?: unknown; caBundle?: string } };
    };
  };
  status?: { storedVersions?: string[] };
}
interface NodePoolJson {
  apiVersion: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    type?: string;
    hostNetwork?: boolean;
    leaderElectionStrategy?: string;
    poolScopeMetadata?: Array<{ group: string; version: string; resource: string }>;
    taints?: Array<{ key: string; value?: string; effect: string }>;
  };
}
interface DeploymentJson {
  metadata: { generation?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
  spec: {
    template: {
      spec: { hostNetwork?: boolean; tolerations?: Array<{ key?: string; value?: string; effect?: string }> };
    };
  };
}

const NODEPOOLS = (version: string) => `/apis/apps.openyurt.io/${version}/nodepools`;
const NODEPOOL_CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.apps.openyurt.io';
/** v1beta1 carries a pool's hostNetwork in this annotation; yurt-manager's conversion maps it to v1beta2's spec. */
const HOST_NETWORK_ANNOTATION = 'nodepool.openyurt.io/hostnetwork';

/**
 * Conversion requests yurt-manager's webhook server answered (controller-runtime's
 * `controller_runtime_webhook_requests_total` for `/convert`, from its metrics endpoint), by status code.
 */
async function conversionsServed(ym: RunningYurtManager): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${ym.ports.metrics}/metrics`);
  if (!res.ok) throw new Error(`yurt-manager metrics: HTTP ${res.status}`);
  let total = 0;
  for (const line of (await res.text()).split('\n')) {
    const m = /^controller_runtime_webhook_requests_total\{([^}]*)\} (\S+)$/.exec(line);
    if (m && /webhook="\/convert"/.test(m[1]!) && /code="200"/.test(m[1]!)) total += Number(m[2]);
  }
  return total;
}
interface Owned {
  metadata: { name: string; ownerReferences?: Array<{ apiVersion: string; kind: string; name: string }> };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

/** What each release's own NodePool CRD is (its chart), and so the version the product must read. */
const RELEASES: Array<{
  release: OpenYurtRelease;
  served: string[];
  stored: string;
  otherVersion: string;
  /**
   * A pool labelled compat: v1.5.1's hubs have a coordinator client (the component is not installed here, so the
   * condition asks for it); v1.7.0's have none, which its CRDs tell (core/yurt-coordinator/hub-support.ts).
   */
  compatReason: 'NotInstalled' | 'HubsHaveNoCoordinator';
}> = [
  {
    release: 'v1.5.1',
    served: ['v1alpha1', 'v1beta1'],
    stored: 'v1beta1',
    otherVersion: 'v1alpha1',
    compatReason: 'NotInstalled',
  },
  {
    release: 'v1.7.0',
    served: ['v1alpha1', 'v1beta1', 'v1beta2'],
    stored: 'v1beta2',
    otherVersion: 'v1beta1',
    compatReason: 'HubsHaveNoCoordinator',
  },
];

for (const { release, served, stored, otherVersion, compatReason } of RELEASES) {
  describe(`OpenYurt ${release}'s own CRDs on the real control plane (1 cluster × 2 edge pools + 1 cloud pool)`, () => {
    let fleet: LocalFleet;
    let dir: string;
    let host: RawObjectApi;
    let convergedMs = 0;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `ps-openyurt-${release}-`));
      const started = performance.now();
      fleet = await startLocalFleet({
        clusters: 1,
        pools: 2,
        nodesPerPool: 1,
        cloudPools: 1,
        stateDir: dir,
        readyDelayMs: 20,
        retryBaseDelayMs: 20,
        controlPlane: 'real',
        openYurt: release,
        // v1.7.0's suite adds a hostNetwork pool: installed as docs/cluster-install.md says for such clusters.
        ...(release === 'v1.7.0' ? { productComponents: ['infra/cluster/components/host-network-pools'] } : {}),
      });
      await fleet.waitConverged(90_000);
      convergedMs = performance.now() - started;
      host = RawObjectApi.fromKubeConfig(fleet.clusters[0]!.kubeConfig);
    }, 150_000);
    afterAll(async () => {
      const ym = fleet?.clusters[0]?.yurtManager;
      console.info(
        `OpenYurt ${release}: local up to converged in ${Math.round(convergedMs)} ms` +
          (ym ? ` (yurt-manager ${ym.release} ready ${ym.readyMs} ms after its spawn)` : ''),
      );
      await fleet?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it(`serves the release's own NodePool CRD: ${served.join(', ')}, ${stored} stored, webhook conversion`, async () => {
      const crd = await host.requestJson<Crd>(
        HttpMethod.GET,
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.apps.openyurt.io',
      );
      expect(crd.spec.versions.filter((v) => v.served).map((v) => v.name)).toEqual(served);
      expect(crd.spec.versions.filter((v) => v.storage).map((v) => v.name)).toEqual([stored]);
      expect(crd.spec.conversion?.strategy).toBe('Webhook');
      // The chart's other CRDs came with it (the project installs none of them).
      await host.requestJson(
        HttpMethod.GET,
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/yurtappsets.apps.openyurt.io',
      );
    });

    it(`converges every edge pool, reading NodePools at ${stored} (its PoolSpirits' owner references say so)`, async () => {
      const spirits = await host.requestJson<{ items: Owned[] }>(
        HttpMethod.GET,
        '/apis/poolspirit.io/v1alpha1/poolspirits',
      );
      expect(spirits.items.map((s) => s.metadata.name).sort()).toEqual(['pool-00', 'pool-01']);
      for (const spirit of spirits.items) {
        expect(spirit.status?.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
        expect(spirit.metadata.ownerReferences).toEqual([
          expect.objectContaining({ apiVersion: `apps.openyurt.io/${stored}`, kind: 'NodePool' }),
        ]);
      }
    });

    it(`the audit records the release's NodePool versions on the cluster's registration`, async () => {
      const deps = auditDeps({
        table: fleet.table,
        events: { putEvents: async (entries) => fleet.bus.putEvents(entries).Entries },
        eventBusName: fleet.eventBusName,
        logger: new Logger({ logLevel: 'ERROR' }),
      });
      const { results } = await auditNow(deps, { requestedBy: 'e2e' });
      const found = { nodePoolApiVersion: `apps.openyurt.io/${stored}`, nodePoolVersions: [...served].reverse() };
      expect(results.map((r) => [r.record.cluster, r.record.findings, r.record.openYurt])).toEqual([
        [fleet.clusters[0]!.id, [], found],
      ]);
      expect((await getCluster(fleet.table, fleet.clusters[0]!.id))?.openYurt).toMatchObject(found);
    });

    it(`a pool labelled compat: ${compatReason}, from what the cluster serves`, async () => {
      await host.requestJson(HttpMethod.PATCH, `/apis/apps.openyurt.io/${stored}/nodepools/pool-01`, {
        body: { metadata: { labels: { 'poolspirit.io/yurt-coordinator': 'compat' } } },
        contentType: 'application/merge-patch+json',
      });
      const condition = await waitFor(
        async () =>
          (
            await host.requestJson<Owned>(HttpMethod.GET, '/apis/poolspirit.io/v1alpha1/poolspirits/pool-01')
          ).status?.conditions?.find((c) => c.type === 'YurtCoordinatorObjectsReady'),
        30_000,
        "pool-01's YurtCoordinatorObjectsReady condition",
      );
      expect(condition).toMatchObject({ status: 'False', reason: compatReason });
      if (compatReason === 'HubsHaveNoCoordinator') {
        expect(condition.message).toContain('OpenYurt v1.7.0 or later');
        // Refused, the pool is rendered as any pool: its pool-spirit stays Available.
        const spirit = await host.requestJson<Owned>(
          HttpMethod.GET,
          '/apis/poolspirit.io/v1alpha1/poolspirits/pool-01',
        );
        expect(spirit.status?.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
      }
    });

    it(`runs yurt-manager ${release}: its webhooks labelled the pools seeded, and it converts a read at ${otherVersion}`, async () => {
      const ym = fleet.clusters[0]!.yurtManager!;
      expect(ym.release).toBe(release);
      // The release's own build, with the release's controllers; it prints the version stamped into it.
      const cmdline = readFileSync(`/proc/${ym.pid}/cmdline`, 'utf8').split('\0');
      expect(cmdline[0]).toMatch(release === 'v1.5.1' ? /\/yurt-manager$/ : /\/yurt-manager-v1\.7\.0$/);
      expect(cmdline).toContain(`--controllers=${DEFAULT_CONTROLLERS[release].join(',')}`);
      expect(await ym.currentLog()).toContain(`GitVersion:"${release}"`);
      const pool = await host.requestJson<NodePoolJson>(HttpMethod.GET, `${NODEPOOLS(stored)}/pool-00`);
      // The NodePool defaulting webhook's label, which the local stack does not write.
      expect(pool.metadata.labels?.['nodepool.openyurt.io/type']).toBe('edge');
      const old = await host.requestJson<{ apiVersion: string }>(HttpMethod.GET, `${NODEPOOLS(otherVersion)}/pool-00`);
      expect(old.apiVersion).toBe(`apps.openyurt.io/${otherVersion}`);
    });

    it(`stores ${stored} only, and yurt-manager serves the conversion: the CRD names its URL and CA, and every read at another served version is one more conversion it answered`, async () => {
      const ym = fleet.clusters[0]!.yurtManager!;
      const crd = await host.requestJson<Crd>(HttpMethod.GET, NODEPOOL_CRD);
      expect(crd.status?.storedVersions).toEqual([stored]);
      const clientConfig = crd.spec.conversion?.webhook?.clientConfig;
      expect(clientConfig?.service).toBeUndefined();
      expect(clientConfig?.url).toBe(`https://127.0.0.1:${ym.ports.webhook}/convert`);
      expect(Buffer.from(clientConfig?.caBundle ?? '', 'base64').toString('utf8')).toBe(ym.webhookCaPem);
      for (const version of served.filter((v) => v !== stored)) {
        const before = await conversionsServed(ym);
        const pool = await host.requestJson<NodePoolJson>(HttpMethod.GET, `${NODEPOOLS(version)}/pool-00`);
        expect(pool.apiVersion).toBe(`apps.openyurt.io/${version}`);
        // The metric is counted when the handler returns, a moment after the apiserver has its answer.
        await waitFor(
          async () => (await conversionsServed(ym)) > before,
          10_000,
          `yurt-manager's /convert count to rise after a read at ${version}`,
        );
      }
      // A read at the stored version needs none: the count stays.
      const before = await conversionsServed(ym);
      await host.requestJson(HttpMethod.GET, `${NODEPOOLS(stored)}/pool-00`);
      await host.requestJson(HttpMethod.GET, NODEPOOLS(stored));
      expect(await conversionsServed(ym)).toBe(before);
    });

    if (release === 'v1.7.0') {
      it("a pool created and changed at v1beta1 is stored at v1beta2 by yurt-manager's conversion, and the product converges it from what was stored", async () => {
        const started = performance.now();
        // v1beta1 has no spec field the apiserver could copy into v1beta2's spec.hostNetwork: only yurt-manager's
        // conversion (apps/v1beta1 ConvertTo) reads this annotation into it.
        const created = await host.requestJson<NodePoolJson>(HttpMethod.POST, NODEPOOLS('v1beta1'), {
          body: {
            apiVersion: 'apps.openyurt.io/v1beta1',
            kind: 'NodePool',
            metadata: { name: 'pool-02', annotations: { [HOST_NETWORK_ANNOTATION]: 'true' } },
            spec: { type: 'Edge' },
          },
        });
        expect(created.apiVersion).toBe('apps.openyurt.io/v1beta1');
        const stored2 = await host.requestJson<NodePoolJson>(HttpMethod.GET, `${NODEPOOLS('v1beta2')}/pool-02`);
        expect(stored2.spec).toMatchObject({ type: 'Edge', hostNetwork: true, leaderElectionStrategy: 'random' });
        // v1.7.0's defaulting webhook is registered at v1beta2 only: the apiserver had yurt-manager convert the pool
        // to call it and convert the result back to v1beta1, so what v1beta1 can hold survived (the type label) and
        // what only v1beta2 has did not (the pool scope it defaults: a pool seeded at v1beta2 has it).
        expect(stored2.metadata.labels?.['nodepool.openyurt.io/type']).toBe('edge');
        expect(stored2.spec.poolScopeMetadata).toBeUndefined();
        const seeded = await host.requestJson<NodePoolJson>(HttpMethod.GET, `${NODEPOOLS('v1beta2')}/pool-00`);
        expect(seeded.spec.poolScopeMetadata?.map((m) => m.resource)).toEqual(['services', 'endpointslices']);
        // A node for it; yurt-manager's Node webhook reads pools from its informer, a moment behind.
        await waitFor(
          () => host.createJson(edgeNode('pool-02-node-0', 'pool-02') as KubernetesObject),
          15_000,
          "yurt-manager's Node webhook to know NodePool pool-02",
          200,
        );
        const names = objectNames('pool-02');
        const deploymentPath = `/apis/apps/v1/namespaces/${PRODUCT_NAMESPACE}/deployments/${names.base}`;
        const spirit = await waitFor(
          async () => {
            const s = await host.requestJson<Owned>(HttpMethod.GET, '/apis/poolspirit.io/v1alpha1/poolspirits/pool-02');
            return s.status?.conditions?.find((c) => c.type === 'Available')?.status === 'True' ? s : undefined;
          },
          60_000,
          'the PoolSpirit of pool-02 Available',
          100,
        );
        expect(spirit.metadata.ownerReferences).toEqual([
          expect.objectContaining({ apiVersion: 'apps.openyurt.io/v1beta2', kind: 'NodePool', name: 'pool-02' }),
        ]);
        // Rendered from the stored pool: hostNetwork is what the conversion made of the annotation.
        const deployment = await host.requestJson<DeploymentJson>(HttpMethod.GET, deploymentPath);
        expect(deployment.spec.template.spec.hostNetwork).toBe(true);
        const convergedViaV1beta1Ms = Math.round(performance.now() - started);

        // A change written at v1beta1 (a taint, a field both versions have) reaches what the product renders.
        const changed = performance.now();
        await host.requestJson(HttpMethod.PATCH, `${NODEPOOLS('v1beta1')}/pool-02`, {
          body: { spec: { taints: [{ key: 'e2e.test/v1beta1-write', value: 'yes', effect: 'NoSchedule' }] } },
          contentType: 'application/merge-patch+json',
        });
        const stored3 = await host.requestJson<NodePoolJson>(HttpMethod.GET, `${NODEPOOLS('v1beta2')}/pool-02`);
        expect(stored3.spec.taints).toEqual([{ key: 'e2e.test/v1beta1-write', value: 'yes', effect: 'NoSchedule' }]);
        expect(stored3.spec.hostNetwork).toBe(true);
        await waitFor(
          async () =>
            (
              await host.requestJson<DeploymentJson>(HttpMethod.GET, deploymentPath)
            ).spec.template.spec.tolerations?.some(
              (t) => t.key === 'e2e.test/v1beta1-write' && t.value === 'yes' && t.effect === 'NoSchedule',
            ),
          60_000,
          "pool-02's Deployment to tolerate the taint written at v1beta1",
          100,
        );
        // Its pod is replaced by one that tolerates it (the rollout done), and the PoolSpirit is Available again.
        await waitFor(
          async () => {
            const d = await host.requestJson<DeploymentJson>(HttpMethod.GET, deploymentPath);
            const rolledOut =
              d.status?.observedGeneration === d.metadata.generation &&
              d.status?.updatedReplicas === 1 &&
              d.status?.availableReplicas === 1 &&
              (d.status?.replicas ?? 0) === 1;
            if (!rolledOut) return undefined;
            const spirit = await host.requestJson<Owned>(
              HttpMethod.GET,
              '/apis/poolspirit.io/v1alpha1/poolspirits/pool-02',
            );
            return spirit.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
          },
          60_000,
          "pool-02's pool-spirit rolled out with the toleration and Available again",
          100,
        );
        console.info(
          `OpenYurt v1.7.0: pool created at v1beta1 converged in ${convergedViaV1beta1Ms} ms; ` +
            `a taint written at v1beta1 rendered in ${Math.round(performance.now() - changed)} ms`,
        );
      }, 150_000);

      it("yurt-manager logged no error while it served the product's cluster, but optimistic-concurrency requeues", async () => {
        const lines = await fleet.clusters[0]!.yurtManager!.errorLines();
        // A controller wrote an object another had just written (hubleaderrbac's shared ClusterRole
        // yurt-hub-multiplexer, one reconcile per pool); controller-runtime requeues it. Logged through zap.
        const requeue =
          /\tReconciler error\t.*"error": "Operation cannot be fulfilled on \S+ \\"[^"\\]+\\": the object has been modified/;
        expect(lines.filter((l) => !requeue.test(l))).toEqual([]);
      });

      it('with yurt-manager stopped only the stored version answers (a read at v1beta1 is a 500 naming the conversion webhook), and the product keeps reading v1beta2', async () => {
        await fleet.clusters[0]!.yurtManager!.stop();
        const err = await host
          .requestJson(HttpMethod.GET, `${NODEPOOLS(otherVersion)}/pool-00`)
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiException);
        expect((err as ApiException<unknown>).code).toBe(500);
        expect(JSON.stringify((err as ApiException<unknown>).body)).toMatch(/conversion webhook/);
        // The audit reads every pool at v1beta2 and finds nothing to say.
        const deps = auditDeps({
          table: fleet.table,
          events: { putEvents: async (entries) => fleet.bus.putEvents(entries).Entries },
          eventBusName: fleet.eventBusName,
          logger: new Logger({ logLevel: 'ERROR' }),
        });
        const { results } = await auditNow(deps, { requestedBy: 'e2e' });
        expect(results.map((r) => [r.record.cluster, r.record.findings])).toEqual([[fleet.clusters[0]!.id, []]]);
      });
    }

    if (release === 'v1.5.1') {
      it("a cluster whose NodePool CRD is gone (OpenYurt's other CRDs still serving the group) is terminal: one attempt, one dead letter naming the cluster and what it serves", async () => {
        const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.apps.openyurt.io';
        await host.requestJson(HttpMethod.DELETE, crdPath);
        await waitFor(
          async () =>
            (await host
              .requestJson(HttpMethod.GET, crdPath)
              .then(() => false)
              .catch((e: unknown) => e instanceof ApiException && e.code === 404)) || undefined,
          30_000,
          'the NodePool CRD deleted',
        );
        // The deletion cascades (NodePools, then their PoolSpirits), and those notices dead-letter alike: let it
        // settle, so the request below is not queued behind their leases.
        await waitFor(
          async () =>
            (await host.requestJson<{ items: unknown[] }>(HttpMethod.GET, '/apis/poolspirit.io/v1alpha1/poolspirits'))
              .items.length === 0,
          30_000,
          'the PoolSpirits collected',
        );
        await fleet.bus.drain();
        const clusterId = fleet.clusters[0]!.id;
        const [entry] = fleet.bus.putEvents([
          {
            Source: RECONCILER_SOURCE,
            DetailType: RECONCILE_REQUEST_DETAIL_TYPE,
            Detail: JSON.stringify({ clusterId, nodePool: 'pool-00', reason: 'e2e', requestedBy: 'e2e' }),
            EventBusName: fleet.eventBusName,
          },
        ]).Entries;
        const eventId = entry && 'EventId' in entry ? entry.EventId : undefined;
        expect(eventId).toBeTruthy();
        const mine = () => fleet.bus.deadLetters().filter((l) => l.eventId === eventId);
        await waitFor(() => mine().length > 0, 30_000, 'the request dead-lettered');
        await fleet.bus.drain();
        const letters = mine();
        expect(letters).toHaveLength(1);
        expect(letters[0]).toMatchObject({ reason: 'terminal', target: 'reconcile', attempts: 1 });
        expect(letters[0]!.terminal?.message).toBe(
          `cluster ${clusterId} serves apps.openyurt.io v1beta1, v1alpha1 but no NodePool in apps.openyurt.io/v1beta1: ` +
            'pool-spirit reads NodePool v1beta2 or v1beta1 ' +
            '(OpenYurt v1.0 and later, or infra/crds/nodepool.yaml on a cluster without OpenYurt)',
        );
      });
    }
  });
}
