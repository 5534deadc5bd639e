import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { waitFor } from '../support/wait.ts';
import { agentOptions, type Host, type Own, startHost, startOwn, tempDir, withAgent } from './world.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';

/** MicroTime as client-go writes it. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function lease(holder: string, renew: Date, transitions: number) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'yurthub', namespace: 'kube-system' },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      renewTime: microTime(renew),
      acquireTime: microTime(renew),
      leaseTransitions: transitions,
    },
  };
}

/** An update with the current resourceVersion, as client-go's leader election does. */
async function replaceLease(api: RawObjectApi, next: ReturnType<typeof lease>): Promise<void> {
  const current = await api.requestJson<{ metadata: { resourceVersion: string } }>(HttpMethod.GET, `${LEASES}/yurthub`);
  await api.requestJson(HttpMethod.PUT, `${LEASES}/yurthub`, {
    body: { ...next, metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion } },
  });
}

describe('agent leader report', () => {
  let host: Host;
  let own: Own;
  let api: RawObjectApi;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    tmp = await tempDir();
    host = await startHost();
    own = await startOwn({ dir: tmp.dir });
    const kc = new KubeConfig();
    kc.loadFromFile(own.kubeconfigPath);
    api = RawObjectApi.fromKubeConfig(kc);
  });
  afterAll(async () => {
    await own?.stop();
    await host?.stop();
    await tmp?.remove();
  });

  it('reports the holder, follows a transition at once, and clears the holder when the Lease expires or is deleted', async () => {
    await withAgent(agentOptions(host, own.kubeconfigPath, { reportIntervalMs: 60_000 }), async (agent) => {
      // No Lease yet: nobody leads, and the report says when that was seen.
      const none = await waitFor(async () => (await host.status()).leader, 15_000, 'first leader report');
      expect(none.holder).toBeUndefined();
      expect(Date.parse(none.observedTime!)).toBeGreaterThan(Date.now() - 10_000);

      await api.createJson(lease('node-a', new Date(), 0) as never);
      const a = await waitFor(
        async () => {
          const l = (await host.status()).leader;
          return l?.holder === 'node-a' ? l : undefined;
        },
        15_000,
        'node-a reported',
      );
      expect(a.transitions).toBe(0);
      expect(a.renewTime).toMatch(/^\d{4}-\d\d-\d\dT/);

      // A transition is written at once, not at the (here one-minute) periodic refresh.
      await replaceLease(api, lease('node-b', new Date(), 1));
      const b = await waitFor(
        async () => {
          const l = (await host.status()).leader;
          return l?.holder === 'node-b' ? l : undefined;
        },
        5_000,
        'node-b reported',
      );
      expect(b.transitions).toBe(1);

      // Expired (last renewed a minute ago with a 15 s lease): no holder, but when it was last renewed stays.
      const renewed = new Date(Date.now() - 60_000);
      await replaceLease(api, lease('node-b', renewed, 1));
      const expired = await waitFor(
        async () => {
          const l = (await host.status()).leader;
          return l && !l.holder ? l : undefined;
        },
        5_000,
        'expired lease cleared',
      );
      expect(Date.parse(expired.renewTime!)).toBe(Date.parse(microTime(renewed)));
      expect(expired.transitions).toBe(1);

      await api.requestJson(HttpMethod.DELETE, `${LEASES}/yurthub`);
      const gone = await waitFor(
        async () => {
          const l = (await host.status()).leader;
          return l && !l.holder && !l.renewTime ? l : undefined;
        },
        5_000,
        'deleted lease cleared',
      );
      expect(gone.transitions).toBeUndefined();
      expect(agent.stats.leader.reads).toBeGreaterThan(3);
    });
  });

  it('withdraws the report when its apiserver stays unreachable, keeping the time of the last good read', async () => {
    const dir = await tempDir();
    const other = await startOwn({ dir: dir.dir });
    try {
      await withAgent(agentOptions(host, other.kubeconfigPath, { staleAfterMs: 1000 }), async (agent) => {
        const kc = new KubeConfig();
        kc.loadFromFile(other.kubeconfigPath);
        await RawObjectApi.fromKubeConfig(kc).createJson(lease('node-z', new Date(), 4) as never);
        const seen = await waitFor(
          async () => {
            const l = (await host.status()).leader;
            return l?.holder === 'node-z' ? l : undefined;
          },
          15_000,
          'node-z reported',
        );

        await other.stop();
        const stopAt = Date.now();
        const withdrawn = await waitFor(
          async () => {
            const l = (await host.status()).leader;
            return l && !l.holder ? l : undefined;
          },
          10_000,
          'leader withdrawn',
        );
        // Not before the staleness bound, and with the observation time of the last good read, not a new one.
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(withdrawn.observedTime!) + 1000);
        expect(withdrawn.renewTime).toBeUndefined();
        expect(withdrawn.transitions).toBeUndefined();
        expect(Date.parse(withdrawn.observedTime!)).toBeGreaterThanOrEqual(Date.parse(seen.observedTime!));
        expect(Date.parse(withdrawn.observedTime!)).toBeLessThanOrEqual(stopAt);
        expect(agent.stats.leader.withdrawn).toBe(1);
      });
    } finally {
      await other.stop();
      await dir.remove();
    }
  });
});
