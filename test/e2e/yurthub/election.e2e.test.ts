/**
 * Real YurtHubs (OpenYurt v1.5.1) electing their pool's leader in real pool-spirits (process mode, real host
 * control plane): 3 pools × 3 hubs. Times are printed as JSON lines (`yurthub-figure`) for the docs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { objectNames } from '../../../core/render/names.ts';
import {
  CERTS_SECRET_KEYS,
  COORDINATOR_CLIENT_RULES,
  COORDINATOR_CLIENT_USER,
} from '../../../core/yurt-coordinator/index.ts';
import { PRODUCT_NAMESPACE } from '../../../dev/local/fleet/seed.ts';
import type { CertAndKey } from '../../../dev/local/pki.ts';
import { readCertsSecret } from '../../../dev/local/yurthub/host-install.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../../events/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  call,
  etcdVersion,
  HttpMethod,
  hostApi,
  leaderOf,
  nodeLeaseIn,
  startYurtHubWorld,
  type YurtHubWorld,
} from './world.ts';

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
  }, 120_000);

  it("elects exactly one leader per pool, one of the pool's own nodes, the hub itself agreeing", async () => {
    const firstLeaderMs: Record<string, number> = {};
    await waitFor(
      async () => {
        for (const pool of world.pools) {
          if (firstLeaderMs[pool] !== undefined) continue;
          const { holder } = await leaderOf(world, pool);
          if (holder) firstLeaderMs[pool] = Date.now() - world.hubsStartedAt;
        }
        return Object.keys(firstLeaderMs).length === POOLS;
      },
      90_000,
      'a leader in every pool',
      200,
    );
    figure('first-leader-ms-per-pool', firstLeaderMs);
    for (const pool of world.pools) {
      const { holder } = await leaderOf(world, pool);
      const hubs = world.hubs.byPool(pool);
      expect(hubs.map((h) => h.node)).toContain(holder);
      // The hubs' own view (their role metric) converges on the same single leader.
      await waitFor(
        async () => {
          const roles = await Promise.all(hubs.map(async (h) => [h.node, await h.role()] as const));
          const leaders = roles.filter(([, r]) => r === 'leader').map(([n]) => n);
          return (
            leaders.length === 1 && leaders[0] === holder && roles.every(([, r]) => r === 'leader' || r === 'follower')
          );
        },
        30_000,
        `hubs of ${pool} agreeing on leader ${holder}`,
        200,
      );
    }
    // The harness's own readiness wait agrees: every hub healthy and elected, one leader per pool.
    await world.hubs.waitElected(10_000);
  }, 150_000);

  it('the pool-spirit agent reports the real leader in PoolSpirit status (what the fleet audit reads)', async () => {
    const host = await hostApi(world);
    for (const pool of world.pools) {
      await waitFor(
        async () => {
          const { holder } = await leaderOf(world, pool);
          const ps = await host.requestJson<Obj>(HttpMethod.GET, `/apis/poolspirit.io/v1alpha1/poolspirits/${pool}`);
          return holder !== undefined && ps.status?.leader?.holder === holder;
        },
        60_000,
        `PoolSpirit ${pool} status naming the real leader`,
        500,
      );
    }
  }, 90_000);

  it('serves pool-scoped data the leader synced into the pool-spirit to a follower (its pool proxy)', async () => {
    const pool = world.pools[2]!;
    const s = world.hubs.spiritOf(pool);
    const host = await hostApi(world);
    await host.applyJson(
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'yurthub-probe',
          namespace: 'default',
          labels: { 'kubernetes.io/service-name': 'yurthub-probe' },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.7'] }],
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      } as never,
      'yurthub-test',
      true,
    );
    const writtenAt = Date.now();
    // The leader lists pool-scoped resources from the host and writes them into the pool-spirit's etcd.
    await waitFor(
      async () =>
        (
          await call(
            s.apiServerUrl,
            s.caPem,
            'GET',
            '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/yurthub-probe',
            world.observer(pool),
          )
        ).status === 200,
      40_000,
      `the EndpointSlice in ${pool}'s pool-spirit`,
      250,
    );
    const inPoolMs = Date.now() - writtenAt;
    const { holder } = await leaderOf(world, pool);
    const follower = world.hubs.byPool(pool).find((h) => h.node !== holder)!;
    // The follower's pool proxy serves pool-scoped lists once the pool cache is ready (the leader renews the
    // informer-sync Lease every 10 s, stale after 30 s); until then it proxies them to the host.
    const servedByPool = () =>
      auditEvents(world).some(
        (e) =>
          e.user?.username === COORDINATOR_CLIENT_USER &&
          e.objectRef?.resource === 'endpointslices' &&
          e.verb === 'list',
      );
    let items = 0;
    // Until the pool cache is ready the hub hands the list to the host ("yurt-coordinator is not ready"):
    // list until the pool-spirit's apiserver has served one, as the coordinator identity.
    await waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${follower.ports.proxy}/apis/discovery.k8s.io/v1/endpointslices`, {
          headers: { 'user-agent': 'kube-proxy/v1.28.9' },
          signal: AbortSignal.timeout(5000),
        });
        const body = (await res.json()) as { items?: Array<{ metadata: { name: string } }> };
        if (!res.ok || !body.items?.some((i) => i.metadata.name === 'yurthub-probe')) return false;
        items = body.items.length;
        return servedByPool();
      },
      60_000,
      `${follower.node} listing the EndpointSlice through its pool proxy, served by the pool-spirit`,
      1000,
    );
    figure('pool-scoped-data', {
      pool,
      follower: follower.node,
      inPoolSpiritMs: inPoolMs,
      servedByPoolSpiritAfterMs: Date.now() - writtenAt,
      items,
    });
    // What else a node's clients ask of pool-scoped data (kube-proxy, CoreDNS): get, list and watch of
    // EndpointSlices and Endpoints, each through the follower's pool proxy.
    for (const path of [
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/yurthub-probe',
      '/api/v1/endpoints',
      '/api/v1/namespaces/default/endpoints/kubernetes',
      '/apis/discovery.k8s.io/v1/endpointslices?watch=true&timeoutSeconds=1',
      '/api/v1/endpoints?watch=true&timeoutSeconds=1',
    ]) {
      const res = await fetch(`http://127.0.0.1:${follower.ports.proxy}${path}`, {
        headers: { 'user-agent': 'kube-proxy/v1.28.9' },
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      expect(res.status, path).toBeLessThan(500);
    }
  }, 120_000);

  it('replaces a killed leader within lease duration + retry, never with two leaders at once', async () => {
    const pool = world.pools[0]!;
    const before = await leaderOf(world, pool);
    const leader = world.hubs.byPool(pool).find((h) => h.node === before.holder)!;
    const others = world.hubs.byPool(pool).filter((h) => h !== leader);
    const killedAt = Date.now();
    leader.kill();
    let overlaps = 0;
    let samples = 0;
    const next = await waitFor(
      async () => {
        const roles = await Promise.all(others.map((h) => h.role()));
        samples++;
        if (roles.filter((r) => r === 'leader').length > 1) overlaps++;
        const now = await leaderOf(world, pool);
        return now.holder && now.holder !== before.holder ? now : undefined;
      },
      40_000,
      `a new leader in ${pool} after killing ${before.holder}`,
      200,
    );
    const failoverMs = Date.now() - killedAt;
    figure('failover', { pool, killed: before.holder, next: next.holder, failoverMs, overlaps, samples });
    expect(others.map((h) => h.node)).toContain(next.holder);
    // client-go takes over once the old record is leaseDuration (15 s) old, checking every retryPeriod (2 s);
    // YurtHub's elector runs on a 5 s tick on top.
    expect(failoverMs).toBeLessThan(15_000 + 2_000 + 5_000 + 3_000);
    expect(overlaps).toBe(0);
  }, 60_000);

  it('one node cut off from the host: its heartbeat goes through the pool-spirit and the leader delegates it to the host', async () => {
    const pool = world.pools[2]!;
    const s = world.hubs.spiritOf(pool);
    const { holder } = await leaderOf(world, pool);
    const node = world.hubs.byPool(pool).find((h) => h.node !== holder)!.node;
    const host = await hostApi(world);
    const hostMark = async () =>
      (
        await host.requestJson<Obj>(
          HttpMethod.GET,
          `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`,
        )
      ).metadata?.annotations?.['openyurt.io/delegate-heartbeat'];
    const link = world.hubs.hostLinkOf(node);
    const cutAt = Date.now();
    link.cut();
    try {
      await waitFor(
        async () =>
          (await nodeLeaseIn(world, pool, node, s)).body.metadata?.annotations?.['openyurt.io/delegate-heartbeat'] ===
          'true',
        90_000,
        `${node} marking its heartbeat for delegation`,
        500,
      );
      const markedMs = Date.now() - cutAt;
      // Only the leader writes that annotation to the host (it copies the pool-spirit Lease's annotations).
      await waitFor(
        async () => (await hostMark()) === 'true',
        30_000,
        `the leader ${holder} delegating ${node}'s heartbeat to the host`,
        500,
      );
      figure('delegated-heartbeat', {
        pool,
        node,
        leader: holder,
        markedInPoolSpiritMs: markedMs,
        delegatedToHostMs: Date.now() - cutAt,
      });
    } finally {
      link.restore();
    }
    const backAt = Date.now();
    await waitFor(
      async () =>
        (await nodeLeaseIn(world, pool, node, s)).body.metadata?.annotations?.['openyurt.io/delegate-heartbeat'] ===
        undefined,
      90_000,
      `${node}'s delegation mark gone once its link is back`,
      500,
    );
    figure('delegation-stops', { pool, node, ms: Date.now() - backAt });
  }, 240_000);

  it('host cut off: hubs mark their heartbeats for delegation in the pool-spirit and stop electing; host back: marks gone, a leader again', async () => {
    const pool = world.pools[1]!;
    const s = world.hubs.spiritOf(pool);
    const hubs = world.hubs.byPool(pool);
    const hostPid = world.fleet.clusters[0]!.real!.pids['kube-apiserver'];
    const delegated = async () => {
      const marks = await Promise.all(
        hubs.map(async (h) => {
          const r = await nodeLeaseIn(world, pool, h.node, s);
          return r.body.metadata?.annotations?.['openyurt.io/delegate-heartbeat'] === 'true';
        }),
      );
      return marks.filter(Boolean).length;
    };
    expect(await delegated()).toBe(0);
    const cutAt = Date.now();
    process.kill(hostPid, 'SIGSTOP');
    try {
      await waitFor(
        async () => (await delegated()) === hubs.length,
        90_000,
        `every hub of ${pool} marking its heartbeat for delegation`,
        500,
      );
      const markedMs = Date.now() - cutAt;
      const roles = await waitFor(
        async () => {
          const r = await Promise.all(hubs.map((h) => h.role()));
          return r.every((x) => x !== 'leader') ? r : undefined;
        },
        30_000,
        `no hub of ${pool} leading while the host is away`,
        500,
      );
      figure('host-cut-off', {
        pool,
        delegationMarkedMs: markedMs,
        rolesWhileCut: roles,
        noLeaderMs: Date.now() - cutAt,
      });
    } finally {
      process.kill(hostPid, 'SIGCONT');
    }
    const backAt = Date.now();
    await waitFor(
      async () => (await delegated()) === 0,
      90_000,
      `the delegation marks of ${pool} gone once the host is back`,
      500,
    );
    const unmarkedMs = Date.now() - backAt;
    await waitFor(
      async () => (await Promise.all(hubs.map((h) => h.role()))).filter((r) => r === 'leader').length === 1,
      60_000,
      `one leader in ${pool} again`,
      500,
    );
    figure('host-back', { pool, delegationGoneMs: unmarkedMs, leaderAgainMs: Date.now() - backAt });
  }, 240_000);

  it('every hub writes its node Lease into the pool-spirit, as the coordinator identity, never system:masters', async () => {
    for (const pool of world.pools) {
      const s = world.hubs.spiritOf(pool);
      for (const hub of world.hubs.byPool(pool)) {
        await waitFor(
          async () => (await nodeLeaseIn(world, pool, hub.node, s)).status === 200,
          40_000,
          `node Lease of ${hub.node} in ${pool}`,
          250,
        );
      }
    }
    const users = new Set(auditEvents(world).map((e) => e.user?.username));
    expect(users).toContain(COORDINATOR_CLIENT_USER);
    const groups = new Set(
      auditEvents(world)
        .filter((e) => e.user?.username === COORDINATOR_CLIENT_USER)
        .flatMap((e) => e.user?.groups ?? []),
    );
    expect(groups).not.toContain('system:masters');
  }, 60_000);

  it("refuses another pool's certificates: its apiserver client identity (401) and its etcd client identity (TLS)", async () => {
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

  it("rotates the pool's leaf certificates in place: new ones served, no restart, the leader kept", async () => {
    const pool = world.pools[2]!;
    const s = world.hubs.spiritOf(pool);
    const hubs = world.hubs.byPool(pool);
    const { holder } = await leaderOf(world, pool);
    const own = await poolIdentities(world, pool);
    // The apiserver, etcd itself (to its own clients) and the hub-facing etcd proxy each serve a leaf.
    const served = async () => ({
      apiserver: await servedSerial(s.apiServerUrl, s.caPem),
      etcd: await servedSerial(s.etcd.clientEndpoint, own.etcdCaPem, own.etcdClient),
      etcdProxy: await servedSerial(s.etcd.endpoint, own.etcdCaPem, world.coordinatorClient),
    });
    const before = await served();
    // What the reconciler does 30 days before expiry, brought forward: the leaves are taken out of the
    // Secrets (as another writer would), and the reconcile that notices issues new ones from the same CAs.
    const host = await hostApi(world);
    const names = objectNames(pool);
    const strip = async (secret: string, keys: string[]) =>
      host.requestJson(HttpMethod.PATCH, `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${secret}`, {
        body: keys.map((k) => ({ op: 'remove', path: `/data/${k.replace('/', '~1')}` })),
        contentType: 'application/json-patch+json',
        query: { fieldManager: 'rotation-test' },
      });
    const editedAt = Date.now();
    await strip(names.pkiSecret, [
      'apiserver.crt',
      'etcd-server.crt',
      'apiserver-etcd-client.crt',
      'yurt-coordinator-etcd-proxy.crt',
    ]);
    await strip(names.agentSecret, ['agent.crt']);
    let samples = 0;
    let lastLeaderAt = Date.now();
    let longestNoLeaderMs = 0;
    let holders = new Set<string>();
    const after = await waitFor(
      async () => {
        const roles = await Promise.all(hubs.map((h) => h.role()));
        samples++;
        const leaders = hubs.filter((_, i) => roles[i] === 'leader').map((h) => h.node);
        if (leaders.length > 0) {
          longestNoLeaderMs = Math.max(longestNoLeaderMs, Date.now() - lastLeaderAt);
          lastLeaderAt = Date.now();
          holders = new Set([...holders, ...leaders]);
        }
        const now = await served().catch(() => undefined);
        return now &&
          now.apiserver !== before.apiserver &&
          now.etcd !== before.etcd &&
          now.etcdProxy !== before.etcdProxy
          ? now
          : undefined;
      },
      120_000,
      `${pool} serving renewed certificates`,
      200,
    );
    const servedMs = Date.now() - editedAt;
    // The leader is still watched for a lease after that: a late restart would show here.
    const watchUntil = Date.now() + 15_000;
    await waitFor(
      async () => {
        const roles = await Promise.all(hubs.map((h) => h.role()));
        if (roles.includes('leader')) {
          longestNoLeaderMs = Math.max(longestNoLeaderMs, Date.now() - lastLeaderAt);
          lastLeaderAt = Date.now();
        }
        return Date.now() >= watchUntil;
      },
      30_000,
      `watching ${pool}'s leader after the rotation`,
      200,
    );
    const now = world.hubs.spiritOf(pool);
    figure('rotation', { pool, servedMs, before, after, longestNoLeaderMs, holders: [...holders], samples });
    expect(now.etcd.pid).toBe(s.etcd.pid);
    expect(now.apiServer.pid).toBe(s.apiServer.pid);
    expect(longestNoLeaderMs).toBeLessThan(15_000);
    expect([...holders]).toEqual([holder]);
    // The agent restarted in place on its renewed certificate and still reports this leader.
    await waitFor(
      async () =>
        (await host.requestJson<Obj>(HttpMethod.GET, `/apis/poolspirit.io/v1alpha1/poolspirits/${pool}`)).status?.leader
          ?.holder === holder,
      60_000,
      `PoolSpirit ${pool} still naming ${holder} after the rotation`,
      500,
    );
  }, 240_000);

  it('recovers a pool-spirit restart (etcd in memory, all data gone): the hubs elect and write their Leases again', async () => {
    const pool = world.pools[0]!;
    const before = world.hubs.spiritOf(pool);
    archivedAudit.push(...readAudit(before.workDir));
    const killedAt = Date.now();
    restartWindow.from = killedAt;
    process.kill(before.etcd.pid, 'SIGKILL');
    const after = await waitFor(
      () => {
        const now = world.hubs.spiritOf(pool);
        return now.etcd.pid !== before.etcd.pid ? now : undefined;
      },
      60_000,
      `${pool}'s pool-spirit restarted`,
      200,
    );
    const restartedMs = Date.now() - killedAt;
    const leader = await waitFor(
      async () => (await leaderOf(world, pool)).holder,
      90_000,
      `a leader in the restarted ${pool}`,
      500,
    );
    const leaderMs = Date.now() - killedAt;
    for (const hub of world.hubs.byPool(pool).filter((h) => h.process.ended() === undefined)) {
      await waitFor(
        async () => (await nodeLeaseIn(world, pool, hub.node, after)).status === 200,
        60_000,
        `${hub.node}'s node Lease back`,
        500,
      );
    }
    restartWindow.to = Date.now();
    figure('pool-spirit-restart', {
      pool,
      restartedMs,
      leader,
      leaderBackMs: leaderMs,
      nodeLeasesBackMs: Date.now() - killedAt,
    });
  }, 200_000);

  it('uses every rule its coordinator identity holds, and is refused nothing (audit log of each pool-spirit apiserver)', async () => {
    const mine = auditEvents(world).filter((e) => e.user?.username === COORDINATOR_CLIENT_USER);
    const used = new Set(mine.map((e) => `${e.objectRef?.apiGroup ?? ''}/${e.objectRef?.resource}:${e.verb}`));
    const held = COORDINATOR_CLIENT_RULES.flatMap((r) =>
      r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`))),
    );
    // A restarted pool-spirit refuses everyone until its agent has applied the bootstrap again (its RBAC is
    // in memory too): 403s inside that window are the restart, not a missing rule.
    const denied = mine.filter((e) => e.responseStatus?.code === 403);
    const inRestart = (e: Obj) => {
      const t = Date.parse(e.stageTimestamp);
      return t >= restartWindow.from && t <= restartWindow.to;
    };
    const describe = (e: Obj) =>
      `${e.objectRef?.apiGroup ?? ''}/${e.objectRef?.resource}:${e.verb} ${e.objectRef?.namespace ?? ''}/${e.objectRef?.name ?? ''}`;
    const forbidden = [...new Set(denied.filter((e) => !inRestart(e)).map(describe))];
    figure('rbac', {
      held,
      used: [...used].sort(),
      heldNotUsed: held.filter((h) => !used.has(h)),
      forbidden,
      deniedDuringRestart: denied.filter(inRestart).length,
    });
    expect(forbidden).toEqual([]);
    expect(held.filter((h) => !used.has(h))).toEqual([]);
  });

  it("yurt-manager's yurtcoordinatorcert on: a restart of yurt-manager rewrites ca.crt, the next pass names it and writes the product's keys back, and the leaders stay", async () => {
    const [cluster] = world.fleet.clusters;
    const yurtManager = cluster!.yurtManager!;
    const ours = await readCertsSecret(cluster!.kubeConfig);
    const ownCa = ours[CERTS_SECRET_KEYS.ca]!;
    await yurtManager.restart();
    // Written before its leader election, at once: its own CA in place of the pools' bundle.
    await waitFor(
      async () => (await readCertsSecret(cluster!.kubeConfig))[CERTS_SECRET_KEYS.ca] !== ownCa,
      30_000,
      'yurt-manager to write ca.crt',
    );
    const pool = world.pools[0]!;
    const [entry] = world.fleet.bus.putEvents([
      {
        Source: RECONCILER_SOURCE,
        DetailType: RECONCILE_REQUEST_DETAIL_TYPE,
        Detail: JSON.stringify({ clusterId: cluster!.id, nodePool: pool, reason: 'e2e', requestedBy: 'e2e' }),
        EventBusName: world.fleet.eventBusName,
      },
    ]).Entries;
    expect(entry).toHaveProperty('EventId');
    const host = await hostApi(world);
    const condition = await waitFor(
      async () => {
        const spirit = await host.requestJson<Obj>(HttpMethod.GET, `/apis/poolspirit.io/v1alpha1/poolspirits/${pool}`);
        const c = (spirit.status?.conditions ?? []).find((x: Obj) => x.type === 'YurtCoordinatorObjectsReady');
        return c?.reason === 'ForeignWriter' ? c : undefined;
      },
      30_000,
      'the condition to name the foreign writer',
    );
    figure('foreign-writer-condition', condition.message);
    expect(condition.status).toBe('False');
    expect(condition.message).toMatch(
      /^kube-system yurt-coordinator-yurthub-certs was written by yurt-manager \(Update, \S+\): ca\.crt, yurt-coordinator-yurthub-client\.crt, yurt-coordinator-yurthub-client\.key; /,
    );
    const after = await readCertsSecret(cluster!.kubeConfig);
    expect(after[CERTS_SECRET_KEYS.ca]).toBe(ownCa);
    expect(after[CERTS_SECRET_KEYS.clientCert]).toBe(ours[CERTS_SECRET_KEYS.clientCert]);
    for (const p of world.pools) expect((await leaderOf(world, p)).holder, p).toBeTruthy();
  }, 90_000);
});

type Obj = Record<string, any>;

/** From killing a pool-spirit's etcd until its hubs' Leases are back. */
const restartWindow = { from: Number.POSITIVE_INFINITY, to: Number.NEGATIVE_INFINITY };

/** Audit events of pool-spirits that were restarted since (their work dirs are gone). */
const archivedAudit: Obj[] = [];

function readAudit(workDir: string): Obj[] {
  return readFileSync(join(workDir, 'audit.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Obj);
}

function auditEvents(world: YurtHubWorld): Obj[] {
  return [...archivedAudit, ...world.pools.flatMap((pool) => readAudit(world.hubs.spiritOf(pool).workDir))];
}

/** A pool's agent identity (pool CA) and its apiserver's etcd client identity (etcd CA), from the host Secrets. */
async function poolIdentities(
  world: YurtHubWorld,
  pool: string,
): Promise<{ agent: CertAndKey; etcdClient: CertAndKey; etcdCaPem: string }> {
  const host = await hostApi(world);
  const names = objectNames(pool);
  const data = async (name: string) =>
    (await host.requestJson<Obj>(HttpMethod.GET, `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${name}`))
      .data as Record<string, string>;
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  const kc = parse(b64((await data(names.agentSecret)).kubeconfig!));
  const pki = await data(names.pkiSecret);
  return {
    agent: {
      certPem: b64(kc.users[0].user['client-certificate-data']),
      keyPem: b64(kc.users[0].user['client-key-data']),
    },
    etcdClient: { certPem: b64(pki['apiserver-etcd-client.crt']!), keyPem: b64(pki['apiserver-etcd-client.key']!) },
    etcdCaPem: b64(pki['etcd-ca.crt']!),
  };
}

/** The serial number of the certificate a TLS server presents (verified against `caPem`). */
function servedSerial(url: string, caPem: string, client?: CertAndKey): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: hostname,
        port: Number(port),
        ca: caPem,
        cert: client?.certPem,
        key: client?.keyPem,
      },
      () => {
        const serial = socket.getPeerCertificate().serialNumber;
        socket.end();
        resolve(serial);
      },
    );
    socket.setTimeout(5000, () => socket.destroy(new Error('timed out')));
    socket.on('error', reject);
  });
}
