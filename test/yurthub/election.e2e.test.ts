/**
 * Real YurtHubs (OpenYurt v1.5.0) electing their pool's leader in real pool-spirits (process mode, real host
 * control plane): 3 pools × 3 hubs. Times are printed as JSON lines (`yurthub-figure`) for the docs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:https';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectNames } from '../../core/render/names.ts';
import { COORDINATOR_CLIENT_RULES, COORDINATOR_CLIENT_USER } from '../../core/yurt-coordinator/index.ts';
import { PRODUCT_NAMESPACE } from '../../local/fleet/seed.ts';
import type { CertAndKey } from '../../local/kube-api/index.ts';
import { waitFor } from '../support/wait.ts';
import { call, hostApi, HttpMethod, leaderOf, startYurtHubWorld, type YurtHubWorld } from './world.ts';

const POOLS = 3;
const HUBS = 3;
const figure = (name: string, value: unknown) => console.log(JSON.stringify({ 'yurthub-figure': name, value }));

describe('real YurtHubs elect through the pool-spirit (3 pools × 3 hubs)', () => {
  let world: YurtHubWorld;

  beforeAll(async () => {
    // Every pool-spirit apiserver writes an audit log: what the real hubs ask of it is the RBAC evidence.
    process.env.POOLSPIRIT_PROCESS_AUDIT = '1';
    world = await startYurtHubWorld({ pools: POOLS, hubsPerPool: HUBS });
  }, 240_000);
  afterAll(async () => {
    await world?.stop();
    delete process.env.POOLSPIRIT_PROCESS_AUDIT;
  });

  it('elects exactly one leader per pool, one of the pool\'s own nodes, the hub itself agreeing', async () => {
    const firstLeaderMs: Record<string, number> = {};
    await waitFor(async () => {
      for (const pool of world.pools) {
        if (firstLeaderMs[pool] !== undefined) continue;
        const { holder } = await leaderOf(world, pool);
        if (holder) firstLeaderMs[pool] = Date.now() - world.hubsStartedAt;
      }
      return Object.keys(firstLeaderMs).length === POOLS;
    }, 90_000, 'a leader in every pool', 200);
    figure('first-leader-ms-per-pool', firstLeaderMs);
    for (const pool of world.pools) {
      const { holder } = await leaderOf(world, pool);
      const hubs = world.hubs.byPool(pool);
      expect(hubs.map((h) => h.node)).toContain(holder);
      // The hubs' own view (their role metric) converges on the same single leader.
      await waitFor(async () => {
        const roles = await Promise.all(hubs.map(async (h) => [h.node, await h.role()] as const));
        const leaders = roles.filter(([, r]) => r === 'leader').map(([n]) => n);
        return leaders.length === 1 && leaders[0] === holder && roles.every(([, r]) => r === 'leader' || r === 'follower');
      }, 30_000, `hubs of ${pool} agreeing on leader ${holder}`, 200);
    }
  }, 150_000);

  it('replaces a killed leader within lease duration + retry, never with two leaders at once', async () => {
    const pool = world.pools[0]!;
    const before = await leaderOf(world, pool);
    const leader = world.hubs.byPool(pool).find((h) => h.node === before.holder)!;
    const others = world.hubs.byPool(pool).filter((h) => h !== leader);
    const killedAt = Date.now();
    leader.kill();
    let overlaps = 0;
    let samples = 0;
    const next = await waitFor(async () => {
      const roles = await Promise.all(others.map((h) => h.role()));
      samples++;
      if (roles.filter((r) => r === 'leader').length > 1) overlaps++;
      const now = await leaderOf(world, pool);
      return now.holder && now.holder !== before.holder ? now : undefined;
    }, 40_000, `a new leader in ${pool} after killing ${before.holder}`, 200);
    const failoverMs = Date.now() - killedAt;
    figure('failover', { pool, killed: before.holder, next: next.holder, failoverMs, overlaps, samples });
    expect(others.map((h) => h.node)).toContain(next.holder);
    // client-go takes over once the old record is leaseDuration (15 s) old, checking every retryPeriod (2 s);
    // YurtHub's elector runs on a 5 s tick on top.
    expect(failoverMs).toBeLessThan(15_000 + 2_000 + 5_000 + 3_000);
    expect(overlaps).toBe(0);
  }, 60_000);

  it('host cut off: hubs mark their heartbeats for delegation in the pool-spirit and stop electing; host back: marks gone, a leader again', async () => {
    const pool = world.pools[1]!;
    const s = world.hubs.spiritOf(pool);
    const hubs = world.hubs.byPool(pool);
    const hostPid = world.fleet.clusters[0]!.real!.pids['kube-apiserver'];
    const delegated = async () => {
      const marks = await Promise.all(hubs.map(async (h) => {
        const r = await call(s.apiServerUrl, s.caPem, 'GET', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${h.node}`, world.coordinatorClient);
        return r.body.metadata?.annotations?.['openyurt.io/delegate-heartbeat'] === 'true';
      }));
      return marks.filter(Boolean).length;
    };
    expect(await delegated()).toBe(0);
    const cutAt = Date.now();
    process.kill(hostPid, 'SIGSTOP');
    try {
      await waitFor(async () => (await delegated()) === hubs.length, 90_000, `every hub of ${pool} marking its heartbeat for delegation`, 500);
      const markedMs = Date.now() - cutAt;
      const roles = await waitFor(async () => {
        const r = await Promise.all(hubs.map((h) => h.role()));
        return r.every((x) => x !== 'leader') ? r : undefined;
      }, 30_000, `no hub of ${pool} leading while the host is away`, 500);
      figure('host-cut-off', { pool, delegationMarkedMs: markedMs, rolesWhileCut: roles, noLeaderMs: Date.now() - cutAt });
    } finally {
      process.kill(hostPid, 'SIGCONT');
    }
    const backAt = Date.now();
    await waitFor(async () => (await delegated()) === 0, 90_000, `the delegation marks of ${pool} gone once the host is back`, 500);
    const unmarkedMs = Date.now() - backAt;
    await waitFor(async () => (await Promise.all(hubs.map((h) => h.role()))).filter((r) => r === 'leader').length === 1, 60_000, `one leader in ${pool} again`, 500);
    figure('host-back', { pool, delegationGoneMs: unmarkedMs, leaderAgainMs: Date.now() - backAt });
  }, 240_000);

  it('every hub writes its node Lease into the pool-spirit, as the coordinator identity, never system:masters', async () => {
    for (const pool of world.pools) {
      const s = world.hubs.spiritOf(pool);
      for (const hub of world.hubs.byPool(pool)) {
        await waitFor(async () => (await call(s.apiServerUrl, s.caPem, 'GET', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${hub.node}`, world.coordinatorClient)).status === 200, 40_000, `node Lease of ${hub.node} in ${pool}`, 250);
      }
    }
    const users = new Set(auditEvents(world).map((e) => e.user?.username));
    expect(users).toContain(COORDINATOR_CLIENT_USER);
    const groups = new Set(auditEvents(world).filter((e) => e.user?.username === COORDINATOR_CLIENT_USER).flatMap((e) => e.user?.groups ?? []));
    expect(groups).not.toContain('system:masters');
  }, 60_000);

  it('refuses another pool\'s certificates: its apiserver client identity (401) and its etcd client identity (TLS)', async () => {
    const [mine, other] = [world.pools[0]!, world.pools[1]!];
    const s = world.hubs.spiritOf(mine);
    const foreign = await poolIdentities(world, other);
    expect((await call(s.apiServerUrl, s.caPem, 'GET', '/api/v1/namespaces', foreign.agent)).status).toBe(401);
    const own = await poolIdentities(world, mine);
    await expect(etcdVersion(s.etcd.endpoint, own.etcdCaPem, foreign.etcdClient)).rejects.toThrow();
    // The same request with this pool's own etcd client identity, and with the YurtHubs' coordinator identity, is served.
    expect(await etcdVersion(s.etcd.endpoint, own.etcdCaPem, own.etcdClient)).toMatch(/etcdserver/);
    expect(await etcdVersion(s.etcd.endpoint, own.etcdCaPem, world.coordinatorClient)).toMatch(/etcdserver/);
  });

  it('uses every rule its coordinator identity holds, and is refused nothing (audit log of each pool-spirit apiserver)', async () => {
    const mine = auditEvents(world).filter((e) => e.user?.username === COORDINATOR_CLIENT_USER);
    const used = new Set(mine.map((e) => `${e.objectRef?.apiGroup ?? ''}/${e.objectRef?.resource}:${e.verb}`));
    const held = COORDINATOR_CLIENT_RULES.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`))));
    const forbidden = [...new Set(mine.filter((e) => e.responseStatus?.code === 403).map((e) => `${e.objectRef?.apiGroup ?? ''}/${e.objectRef?.resource}:${e.verb}`))];
    figure('rbac', { held, used: [...used].sort(), heldNotUsed: held.filter((h) => !used.has(h)), forbidden });
    expect(forbidden).toEqual([]);
  });
});

type Obj = Record<string, any>;

function auditEvents(world: YurtHubWorld): Obj[] {
  return world.pools.flatMap((pool) => {
    const file = join(world.hubs.spiritOf(pool).workDir, 'audit.log');
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj);
  });
}

/** A pool's agent identity (pool CA) and its apiserver's etcd client identity (etcd CA), from the host Secrets. */
async function poolIdentities(world: YurtHubWorld, pool: string): Promise<{ agent: CertAndKey; etcdClient: CertAndKey; etcdCaPem: string }> {
  const host = await hostApi(world);
  const names = objectNames(pool);
  const data = async (name: string) => (await host.requestJson<Obj>(HttpMethod.GET, `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${name}`)).data as Record<string, string>;
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  const kc = parse(b64((await data(names.agentSecret)).kubeconfig!));
  const pki = await data(names.pkiSecret);
  return {
    agent: { certPem: b64(kc.users[0].user['client-certificate-data']), keyPem: b64(kc.users[0].user['client-key-data']) },
    etcdClient: { certPem: b64(pki['apiserver-etcd-client.crt']!), keyPem: b64(pki['apiserver-etcd-client.key']!) },
    etcdCaPem: b64(pki['etcd-ca.crt']!),
  };
}

/** etcd's /version over its client port (TLS, client certificate required). */
function etcdVersion(endpoint: string, caPem: string, client: CertAndKey): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${endpoint}/version`, { ca: caPem, cert: client.certPem, key: client.keyPem, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}
