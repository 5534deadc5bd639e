/**
 * The product on OpenYurt's own NodePool CRD, per supported release, on the real control plane: the CRDs come
 * from the release's Go module (charts/yurt-manager/crds, `npm run kube-bins`).
 *  - v1.5.1 runs with its own yurt-manager (dev/local/openyurt), as a real v1.5 cluster does: its webhooks
 *    default and validate the pools and nodes seeded, and serve NodePool conversion.
 *  - v1.7.0's yurt-manager is not built here, so nothing serves its conversion webhook and any read at a version
 *    other than the stored one fails: the product converging shows that it reads what the cluster stores.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { ApiException, HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { getCluster } from '../../../adapters/state-table/index.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import type { OpenYurtRelease } from '../../../dev/local/kube-bins/index.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../../events/index.ts';
import { auditDeps, auditNow } from '../../../functions/audit/handler.ts';
import { waitFor } from '../../support/wait.ts';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
}
interface Crd {
  spec: { versions: CrdVersion[]; conversion?: { strategy?: string; webhook?: { clientConfig?: unknown } } };
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
  yurtManager: boolean;
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
    yurtManager: true,
    compatReason: 'NotInstalled',
  },
  {
    release: 'v1.7.0',
    served: ['v1alpha1', 'v1beta1', 'v1beta2'],
    stored: 'v1beta2',
    otherVersion: 'v1beta1',
    yurtManager: false,
    compatReason: 'HubsHaveNoCoordinator',
  },
];

for (const { release, served, stored, otherVersion, yurtManager, compatReason } of RELEASES) {
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
      });
      await fleet.waitConverged(90_000);
      convergedMs = performance.now() - started;
      host = RawObjectApi.fromKubeConfig(fleet.clusters[0]!.kubeConfig);
    }, 150_000);
    afterAll(async () => {
      console.info(`OpenYurt ${release}: local up to converged in ${Math.round(convergedMs)} ms`);
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

    if (yurtManager) {
      it('runs yurt-manager: its webhooks labelled the pools and nodes seeded, and it converts a read at v1alpha1', async () => {
        expect(fleet.clusters[0]!.yurtManager?.pid).toBeGreaterThan(0);
        const pool = await host.requestJson<{ metadata: { labels?: Record<string, string> } }>(
          HttpMethod.GET,
          `/apis/apps.openyurt.io/${stored}/nodepools/pool-00`,
        );
        // The NodePool defaulting webhook's label, which the local stack does not write.
        expect(pool.metadata.labels?.['nodepool.openyurt.io/type']).toBe('edge');
        const old = await host.requestJson<{ apiVersion: string }>(
          HttpMethod.GET,
          `/apis/apps.openyurt.io/${otherVersion}/nodepools/pool-00`,
        );
        expect(old.apiVersion).toBe(`apps.openyurt.io/${otherVersion}`);
      });
    } else {
      it(`a read at ${otherVersion} needs the conversion webhook no one serves here: the product never made one`, async () => {
        const err = await host
          .requestJson(HttpMethod.GET, `/apis/apps.openyurt.io/${otherVersion}/nodepools/pool-00`)
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiException);
        expect((err as ApiException<unknown>).code).toBe(500);
        expect(JSON.stringify((err as ApiException<unknown>).body)).toMatch(/conversion webhook/);
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
