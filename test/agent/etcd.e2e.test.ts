import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEtcdClient } from '../../dev/local/etcd/client.ts';
import type { RunningEtcd } from '../../dev/local/etcd/launch.ts';
import { waitFor } from '../support/wait.ts';
import { agentOptions, type Host, type Own, startEtcd, startHost, startOwn, tempDir, withAgent } from './world.ts';

const MiB = 2 ** 20;

/** Writes `mib` MiB of values under a prefix, deletes them and compacts: the db file keeps the space as free pages. */
async function bloatAndFree(client: Etcd3, mib: number): Promise<void> {
  const value = Buffer.alloc(64 * 1024, 'x');
  for (let i = 0; i < mib * 16; i++) await client.put(`/bloat/${i}`).value(value);
  await client.delete().prefix('/bloat/');
  const { header } = await client.maintenance.status();
  await client.kv.compact({ revision: header.revision, physical: true });
  // bbolt releases freed pages only with a later commit; on a pool-spirit the apiserver writes all the time.
  await waitFor(
    async () => {
      await client.put('/tick').value(String(Date.now()));
      const s = await client.maintenance.status();
      // (or the agent under test already saw them released and defragmented)
      return Number(s.dbSizeInUse) < Number(s.dbSize) / 4 || Number(s.dbSize) < MiB;
    },
    10_000,
    'freed pages released',
    100,
  );
}

/** The etcd report, once it was observed at or after `since` (the host's status outlives each test's etcd). */
async function reportSince(
  host: Host,
  since: number,
  what: string,
  ok: (e: NonNullable<Awaited<ReturnType<Host['status']>>['etcd']>) => boolean = () => true,
) {
  return waitFor(
    async () => {
      const e = (await host.status()).etcd;
      return e && Date.parse(e.observedTime ?? '') >= since && ok(e) ? e : undefined;
    },
    15_000,
    what,
  );
}

describe('agent etcd report and maintenance', () => {
  let host: Host;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    tmp = await tempDir();
    host = await startHost();
  });
  afterAll(async () => {
    await host?.stop();
    await tmp?.remove();
  });

  describe('on a healthy etcd', () => {
    let etcd: RunningEtcd;
    let own: Own;
    let client: Etcd3;
    beforeAll(async () => {
      etcd = await startEtcd();
      own = await startOwn({ etcd, dir: tmp.dir });
      client = createEtcdClient([etcd.endpoint]);
    });
    afterAll(async () => {
      client?.close();
      await own?.stop();
      await etcd?.stop();
    });

    it('reports size, size in use, quota, no alarms, healthy', async () => {
      const options = agentOptions(host, own.kubeconfigPath, {
        etcd: { endpoints: [etcd.endpoint] },
        etcdHealthUrl: `${etcd.endpoint}/health`,
        etcdQuotaBytes: 512 * MiB,
      });
      const since = Date.now();
      await withAgent(options, async (agent) => {
        const reported = await reportSince(host, since, 'etcd report');
        expect(reported.healthy).toBe(true);
        expect(reported.dbSizeBytes).toBeGreaterThan(0);
        expect(reported.dbSizeInUseBytes).toBeGreaterThan(0);
        expect(reported.dbSizeInUseBytes).toBeLessThanOrEqual(reported.dbSizeBytes!);
        expect(reported.quotaBackendBytes).toBe(512 * MiB);
        expect(reported.alarms).toEqual([]);
        expect(Date.parse(reported.observedTime!)).toBeGreaterThan(Date.now() - 10_000);
        // A small, fresh file is not worth a defrag pause with the default thresholds.
        expect(agent.stats.etcd.defrags).toBe(0);
      });
    });

    it('defragments once fragmentation passes the threshold, and records when', async () => {
      const options = agentOptions(host, own.kubeconfigPath, {
        etcd: { endpoints: [etcd.endpoint] },
        defrag: { minFreeRatio: 0.5, minFreeBytes: 2 * MiB, cooldownMs: 60_000 },
      });
      await withAgent(options, async (agent) => {
        await waitFor(() => agent.stats.etcd.reads >= 2, 15_000, 'etcd read');
        expect(agent.stats.etcd.defrags).toBe(0);
        await bloatAndFree(client, 6);
        const reported = await waitFor(
          async () => {
            const e = (await host.status()).etcd;
            return e?.lastDefragTime ? e : undefined;
          },
          15_000,
          'defrag reported',
        );
        expect(agent.stats.etcd.defrags).toBe(1);
        expect(reported.dbSizeBytes).toBeLessThan(2 * MiB);
        expect(Number((await client.maintenance.status()).dbSize)).toBeLessThan(2 * MiB);
        // The cooldown holds off a second defrag even if the threshold passed again.
        await bloatAndFree(client, 3);
        const ticks = agent.stats.ticks;
        await waitFor(() => agent.stats.ticks >= ticks + 3, 10_000, 'more passes');
        expect(agent.stats.etcd.defrags).toBe(1);
      });
    });
  });

  it('compacts, defragments and disarms NOSPACE once the file is back under the quota', async () => {
    const quota = 4 * MiB;
    const etcd = await startEtcd({ extraArgs: [`--quota-backend-bytes=${quota}`] });
    const client = createEtcdClient([etcd.endpoint]);
    try {
      const value = Buffer.alloc(64 * 1024, 'y');
      let refused: Error | undefined;
      for (let i = 0; i < 200 && !refused; i++) {
        await client
          .put(`/fill/${i}`)
          .value(value)
          .catch((err: Error) => {
            refused = err;
          });
      }
      expect(refused?.message).toMatch(/database space exceeded/);
      // Deleting frees nothing on its own: the alarm stays and the file stays over the quota.
      await client.delete().prefix('/fill/');
      const alarmsBefore = await client.maintenance.alarm({ action: 'Get', memberID: 0, alarm: 'None' });
      expect(alarmsBefore.alarms.map((a) => a.alarm)).toContain('Nospace');

      const options = agentOptions(host, (await ownWithoutApiserver()).kubeconfig, {
        etcd: { endpoints: [etcd.endpoint] },
        etcdQuotaBytes: quota,
      });
      const since = Date.now();
      await withAgent(options, async (agent) => {
        await waitFor(() => agent.stats.etcd.alarmsDisarmed === 1, 15_000, 'NOSPACE disarmed');
        expect(agent.stats.etcd.compactions).toBe(1);
        expect(agent.stats.etcd.defrags).toBe(1);
        const reported = await reportSince(
          host,
          since,
          'healthy etcd reported',
          (e) => e.alarms?.length === 0 && e.healthy === true,
        );
        expect(reported.dbSizeBytes).toBeLessThan(quota);
        await client.put('/after').value('writes work again');
      });
    } finally {
      client.close();
      await etcd.stop();
    }
  });

  it('withdraws the etcd report when etcd stays unreachable', async () => {
    const etcd = await startEtcd();
    try {
      const options = agentOptions(host, (await ownWithoutApiserver()).kubeconfig, {
        etcd: { endpoints: [etcd.endpoint] },
        staleAfterMs: 1000,
      });
      const since = Date.now();
      await withAgent(options, async (agent) => {
        const last = await reportSince(host, since, 'healthy report', (e) => e.healthy === true);
        await etcd.stop();
        const withdrawn = await waitFor(
          async () => {
            const e = (await host.status()).etcd;
            return e && e.healthy === undefined ? e : undefined;
          },
          10_000,
          'etcd report withdrawn',
        );
        expect(withdrawn.dbSizeBytes).toBeUndefined();
        expect(withdrawn.alarms).toBeUndefined();
        expect(Date.parse(withdrawn.observedTime!)).toBeGreaterThanOrEqual(Date.parse(last.observedTime!));
        expect(agent.stats.etcd.withdrawn).toBe(1);
      });
    } finally {
      await etcd.stop();
    }
  });

  /** An own apiserver is not what these tests look at; a kubeconfig to a port that refuses is enough. */
  async function ownWithoutApiserver(): Promise<{ kubeconfig: string }> {
    const { writeFile } = await import('node:fs/promises');
    const { kubeconfigYaml } = await import('../../dev/local/kube-api/index.ts');
    const path = `${tmp.dir}/nowhere.kubeconfig`;
    await writeFile(path, kubeconfigYaml('nowhere', 'http://127.0.0.1:1'));
    return { kubeconfig: path };
  }
});
