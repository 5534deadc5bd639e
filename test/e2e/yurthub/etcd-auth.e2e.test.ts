/**
 * etcd auth in yurt-coordinator-compatible pools, judged with real YurtHubs (OpenYurt v1.5.1) on real
 * pool-spirits (process mode, real host control plane): the hubs reach etcd only through the etcd proxy,
 * whose etcd user holds readwrite on the prefixes a hub uses and nothing else. Attacks are made with the
 * real etcdctl and the hubs' own coordinator certificate; the restart test hammers the hub-facing port while
 * etcd comes back empty. Figures are printed as JSON lines (`etcd-auth-figure`).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectNames } from '../../../core/render/names.ts';
import { COORDINATOR_ETCD_PREFIXES } from '../../../core/yurt-coordinator/index.ts';
import { PRODUCT_NAMESPACE } from '../../../dev/local/fleet/seed.ts';
import { requireKubeBinary } from '../../../dev/local/kube-bins/index.ts';
import type { CertAndKey } from '../../../dev/local/pki.ts';
import { hostPort, type Link, startLink } from '../../../dev/local/yurthub/link.ts';
import { waitFor } from '../../support/wait.ts';
import {
  CONTROLLERS_WITHOUT_COORDINATOR_CERT,
  call,
  etcdVersion,
  HttpMethod,
  hostApi,
  leaderOf,
  startYurtHubWorld,
  type YurtHubWorld,
} from './world.ts';

const POOLS = 2;
const HUBS = 2;
const figure = (name: string, value: unknown) => console.log(JSON.stringify({ 'etcd-auth-figure': name, value }));

type Obj = Record<string, any>;

/** Certificate files for etcdctl and etcd3, written 0600 into a private directory. */
interface Files {
  cacert: string;
  cert: string;
  key: string;
}

describe('etcd auth behind the hub-facing etcd proxy (2 pools × 2 real hubs)', () => {
  let world: YurtHubWorld;
  let dir: string;
  /** Per pool: the pool's etcd CA with the coordinator identity (what a hub holds), and its root-capable identity. */
  const as: Record<string, { hub: Files; root: Files; foreign: Files }> = {};
  let primedMs = 0;

  beforeAll(async () => {
    // yurt-manager as docs/openyurt.md asks of a cluster with compat pools: yurtcoordinatorcert off.
    world = await startYurtHubWorld({
      pools: POOLS,
      hubsPerPool: HUBS,
      yurtManagerControllers: CONTROLLERS_WITHOUT_COORDINATOR_CERT,
    });
    // A kubelet's reads through its hub land in the hub's disk cache, and a hub uploads them into the
    // coordinator's etcd when it first joins the election (YurtHub's localCacheUploader: the kubelet's pods and
    // its Node): that is what exercises the pods and minions grants. So the kubelet's reads come first, before
    // the hubs' first election (about 6 s after they start). A kubelet lists its own Node (its informer); its
    // GET of the Node is answered by YurtHub's autonomy proxy, which does not cache it.
    await Promise.all(
      world.hubs.hubs.map(async (h) => {
        for (const path of [
          `/api/v1/nodes?fieldSelector=metadata.name%3D${h.node}`,
          `/api/v1/pods?fieldSelector=spec.nodeName%3D${h.node}`,
        ])
          await waitFor(
            async () => (await kubeletGet(h.ports.proxy, path)) === 200,
            10_000,
            `${h.node}: kubelet ${path}`,
            50,
          );
      }),
    );
    primedMs = Date.now() - world.hubsStartedAt;
    dir = await mkdtemp(join(tmpdir(), 'ps-etcd-auth-'));
    const host = await hostApi(world);
    const pki = async (pool: string) => {
      const secret = await host.requestJson<Obj>(
        HttpMethod.GET,
        `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${objectNames(pool).pkiSecret}`,
      );
      const b64 = (k: string) => Buffer.from(secret.data[k], 'base64').toString('utf8');
      return {
        ca: b64('etcd-ca.crt'),
        root: { certPem: b64('apiserver-etcd-client.crt'), keyPem: b64('apiserver-etcd-client.key') },
      };
    };
    const write = async (name: string, caPem: string, id: CertAndKey): Promise<Files> => {
      const files = { cacert: join(dir, `${name}.ca`), cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
      await writeFile(files.cacert, caPem, { mode: 0o600 });
      await writeFile(files.cert, id.certPem, { mode: 0o600 });
      await writeFile(files.key, id.keyPem, { mode: 0o600 });
      return files;
    };
    for (const [i, pool] of world.pools.entries()) {
      const own = await pki(pool);
      const other = await pki(world.pools[(i + 1) % world.pools.length]!);
      as[pool] = {
        hub: await write(`${pool}-hub`, own.ca, world.coordinatorClient),
        root: await write(`${pool}-root`, own.ca, own.root),
        foreign: await write(`${pool}-foreign`, own.ca, other.root),
      };
    }
  }, 240_000);
  afterAll(async () => {
    await world?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it("yurt-manager without yurtcoordinatorcert: only the product writes the certs Secret's keys, and every compat pool reports them Applied", async () => {
    const host = await hostApi(world);
    const secret = await host.requestJson<Obj>(
      HttpMethod.GET,
      '/api/v1/namespaces/kube-system/secrets/yurt-coordinator-yurthub-certs',
    );
    const writers = (secret.metadata.managedFields as Obj[])
      .filter((f) =>
        Object.keys(f.fieldsV1?.['f:data'] ?? {}).some((k) => /^f:(ca\.crt|yurt-coordinator-yurthub-client)/.test(k)),
      )
      .map((f) => f.manager);
    expect(writers).toEqual(['pool-spirit-reconciler']);
    // The controller never ran: its CA Secret does not exist.
    const ca = await host
      .requestJson(HttpMethod.GET, '/api/v1/namespaces/kube-system/secrets/yurt-coordinator-ca-certs')
      .then(
        () => 200,
        (e: { code?: number }) => e.code,
      );
    expect(ca).toBe(404);
    expect(world.fleet.clusters[0]!.yurtManager?.pid).toBeGreaterThan(0);
    for (const pool of world.pools) {
      const spirit = await host.requestJson<Obj>(HttpMethod.GET, `/apis/poolspirit.io/v1alpha1/poolspirits/${pool}`);
      const c = (spirit.status?.conditions ?? []).find((x: Obj) => x.type === 'YurtCoordinatorObjectsReady');
      expect(c, pool).toMatchObject({ status: 'True', reason: 'Applied' });
    }
  });

  it('elects one leader per pool, and the leader syncs pool-scoped data into etcd through the proxy', async () => {
    const firstLeaderMs: Record<string, number> = {};
    await waitFor(
      async () => {
        for (const pool of world.pools) {
          if (firstLeaderMs[pool] === undefined && (await leaderOf(world, pool)).holder)
            firstLeaderMs[pool] = Date.now() - world.hubsStartedAt;
        }
        return Object.keys(firstLeaderMs).length === POOLS;
      },
      90_000,
      'a leader in every pool',
      200,
    );
    await world.hubs.waitElected(30_000);
    const timeline: Record<string, unknown> = {};
    for (const pool of world.pools) {
      const s = world.hubs.spiritOf(pool);
      const auth = s.agent()!.stats.etcdAuth;
      const proxy = s.etcdProxy()!.stats;
      expect(auth.enables).toBe(1);
      // The proxy listened only after the agent asked etcd to turn auth on, and it carried the hubs.
      expect(Date.parse(proxy.listeningAt!)).toBeGreaterThanOrEqual(Date.parse(auth.enableRequestedAt!));
      expect(proxy.relayed).toBeGreaterThan(0);
      expect(s.etcd.endpoint).not.toBe(s.etcd.clientEndpoint);
      timeline[pool] = {
        authEnabledAfterStartMs: Date.parse(auth.enabledAt!) - s.startedAt.getTime(),
        proxyListeningAfterAuthMs: Date.parse(proxy.listeningAt!) - Date.parse(auth.enabledAt!),
      };
    }
    figure('first-leader-ms-per-pool', firstLeaderMs);
    figure('kubelet-reads-primed-ms', primedMs);
    figure('auth-timeline', timeline);

    const pool = world.pools[1]!;
    const host = await hostApi(world);
    await host.applyJson(endpointSlice('etcd-auth-probe') as never, 'etcd-auth-test', true);
    const writtenAt = Date.now();
    const root = rootClient(pool);
    try {
      await waitFor(
        async () => (await root.get('/registry/endpointslices/default/etcd-auth-probe').string()) !== null,
        40_000,
        `the leader's copy of the EndpointSlice in ${pool}'s etcd`,
        200,
      );
      figure('pool-scoped-sync-ms', Date.now() - writtenAt);
      // YurtHub wrote it (its resourceVersion mirror is YurtHub's alone), and the pool-spirit apiserver serves it.
      expect(await root.get('/mirror/rv/registry/endpointslices/default/etcd-auth-probe').string()).toMatch(/^\d{32}$/);
      const s = world.hubs.spiritOf(pool);
      const got = await call(
        s.apiServerUrl,
        s.caPem,
        'GET',
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/etcd-auth-probe',
        world.observer(pool),
      );
      expect(got.status).toBe(200);
    } finally {
      root.close();
    }
  }, 180_000);

  it('refuses every attack made with the coordinator certificate through the hub-facing port', async () => {
    const pool = world.pools[0]!;
    const s = world.hubs.spiritOf(pool);
    const hub = as[pool]!.hub;
    const rootBefore = rootClient(pool);
    const usersBefore = (await rootBefore.auth.userList()).users.sort();
    const [member] = (await rootBefore.cluster.memberList({})).members;
    rootBefore.close();
    const attacks: Array<[string, string[], string?]> = [
      ['read RBAC', ['get', '/registry/clusterrolebindings/', '--prefix', '--keys-only']],
      ['write RBAC', ['put', '/registry/clusterrolebindings/attack', '{}']],
      ['read Secrets', ['get', '/registry/secrets/', '--prefix', '--keys-only']],
      ['write a Secret', ['put', '/registry/secrets/kube-system/attack', '{}']],
      ['read everything', ['get', '', '--from-key', '--keys-only']],
      ['delete the whole storage prefix', ['del', '/registry/', '--prefix']],
      [
        'a transaction guarded by a granted key writing RBAC',
        ['txn'],
        'mod("/registry/endpointslices/default/x") = "0"\n\nput /registry/clusterrolebindings/attack {}\n\n\n',
      ],
      ['auth disable', ['auth', 'disable']],
      ['user add', ['user', 'add', 'eve', '--no-password']],
      ['role grant-permission', ['role', 'grant-permission', 'root', 'readwrite', '/', '--prefix']],
      ['member add', ['member', 'add', 'eve', '--peer-urls=https://127.0.0.1:1']],
      ['member remove', ['member', 'remove', BigInt(member!.ID).toString(16)]],
      ['snapshot save', ['snapshot', 'save', join(dir, 'stolen.db')]],
      ['defrag', ['defrag']],
      ['compaction', ['compaction', '1']],
    ];
    const results: Record<string, string> = {};
    for (const [what, args, stdin] of attacks) {
      const r = await etcdctl(s.etcd.endpoint, hub, args, stdin);
      results[what] = r.ok ? 'SERVED' : firstError(r.output);
      expect(r.ok, `${what}: ${r.output}`).toBe(false);
      expect(r.output, what).toMatch(/permission denied/i);
    }
    // etcdctl's `alarm disarm` sends nothing while no alarm is raised: ask etcd directly, as it would with one
    // raised, and try raising one (NOSPACE makes etcd refuse every write: a denial of service).
    const hubClient = client(s.etcd.endpoint, hub);
    try {
      for (const action of ['Deactivate', 'Activate'] as const) {
        const alarm = hubClient.maintenance.alarm({ action, memberID: member!.ID, alarm: 'Nospace' });
        await expect(alarm, `alarm ${action}`).rejects.toThrow(/permission denied/i);
        results[`alarm ${action === 'Deactivate' ? 'disarm' : 'raise'} NOSPACE`] = 'etcdserver: permission denied';
      }
    } finally {
      hubClient.close();
    }
    // What the bounded identity is for is served (the control).
    const own = await etcdctl(s.etcd.endpoint, hub, ['get', '/registry/endpointslices', '--prefix', '--keys-only']);
    expect(own.ok, own.output).toBe(true);
    // The pool's root-capable certificate gets no more through the proxy: the identity etcd sees is the proxy's.
    const demoted = await etcdctl(s.etcd.endpoint, as[pool]!.root, [
      'put',
      '/registry/clusterrolebindings/attack',
      '{}',
    ]);
    expect(demoted.output).toMatch(/permission denied/i);
    // Another pool's certificate is refused at the proxy's TLS handshake.
    const foreign = await etcdctl(s.etcd.endpoint, as[pool]!.foreign, ['get', '/registry/endpointslices', '--prefix']);
    expect(foreign.ok).toBe(false);
    expect(foreign.output).not.toMatch(/permission denied/i);
    // etcd's own client port refuses the coordinator certificate at the TLS handshake; it serves the root one.
    await expect(etcdVersionAs(s.etcd.clientEndpoint, hub)).rejects.toThrow();
    expect(await etcdVersionAs(s.etcd.clientEndpoint, as[pool]!.root)).toMatch(/etcdserver/);
    const mainPort = await etcdctl(s.etcd.clientEndpoint, hub, ['get', '/registry/endpointslices', '--prefix']);
    expect(mainPort.ok).toBe(false);
    // Nothing changed: no attack key, auth on, the same users, the member still there.
    const root = rootClient(pool);
    try {
      expect(await root.getAll().prefix('/registry/clusterrolebindings/attack').keys()).toEqual([]);
      expect(await root.get('/registry/secrets/kube-system/attack').string()).toBeNull();
      expect((await root.auth.authStatus()).enabled).toBe(true);
      expect((await root.auth.userList()).users.sort()).toEqual(usersBefore);
      expect((await root.cluster.memberList({})).members).toHaveLength(1);
    } finally {
      root.close();
    }
    figure('attacks', {
      ...results,
      'root certificate through the proxy': firstError(demoted.output),
      "another pool's certificate at the proxy": firstError(foreign.output),
      "coordinator certificate at etcd's own port": firstError(mainPort.output),
    });
  }, 120_000);

  it('serves nothing to the hub-facing port after a pool-spirit restart until etcd auth is on again; the hubs recover', async () => {
    const pool = world.pools[0]!;
    const before = world.hubs.spiritOf(pool);
    const link = await startLink(() => hostPort(world.hubs.spiritOf(pool).etcd.endpoint));
    const hammer = startHammer(link, as[pool]!.hub);
    try {
      await waitFor(() => hammer.attempts.some((a) => a.kind === 'read' && a.ok), 10_000, 'the hammer served before');
      const killedAt = Date.now();
      process.kill(before.etcd.pid, 'SIGKILL');
      const after = await waitFor(
        () => {
          const now = world.hubs.spiritOf(pool);
          return now.etcd.pid !== before.etcd.pid ? now : undefined;
        },
        60_000,
        `${pool}'s pool-spirit restarted`,
        100,
      );
      const restartedMs = Date.now() - killedAt;
      const auth = await waitFor(
        () => {
          const stats = after.agent()?.stats.etcdAuth;
          return stats?.enabledAt ? stats : undefined;
        },
        60_000,
        'auth on again',
        50,
      );
      const leader = await waitFor(
        async () => (await leaderOf(world, pool)).holder,
        90_000,
        `a leader in ${pool}`,
        250,
      );
      const leaderBackMs = Date.now() - killedAt;
      await waitFor(
        () => hammer.attempts.some((a) => a.kind === 'read' && a.ok && a.start > killedAt),
        30_000,
        'the hammer served again',
        100,
      );
      // The leader syncs the pool cache into the new, empty etcd again (through the proxy). YurtHub writes each
      // watch event once: one that arrives before its etcd client has reconnected is dropped (it logs "could not
      // process watch object" and goes on, cachemanager/cache_manager.go) until its informer lists again, when its
      // watch times out (5 – 10 min). So the object is touched every 5 s, as a live endpoint would be, until a
      // version of it is in etcd.
      const host = await hostApi(world);
      const root = rootClient(pool);
      let poolCacheBackMs: number;
      let touches = 0;
      let touchedAt = 0;
      try {
        await waitFor(
          async () => {
            if (Date.now() - touchedAt >= 5_000) {
              touchedAt = Date.now();
              const slice = endpointSlice('etcd-auth-after-restart');
              slice.metadata.annotations = { 'etcd-auth-test/touch': String(++touches) };
              await host.applyJson(slice as never, 'etcd-auth-test', true);
            }
            return (await root.get('/registry/endpointslices/default/etcd-auth-after-restart').string()) !== null;
          },
          60_000,
          'the pool cache synced into the restarted etcd',
          200,
        );
        poolCacheBackMs = Date.now() - killedAt;
        expect(await root.getAll().prefix('/registry/clusterrolebindings/window-').keys()).toEqual([]);
      } finally {
        root.close();
      }
      hammer.stop();
      await hammer.done;

      const enableRequestedAt = Date.parse(auth.enableRequestedAt!);
      const since = hammer.attempts.filter((a) => a.start > killedAt);
      const served = since.filter((a) => a.ok);
      const writes = hammer.attempts.filter((a) => a.kind === 'write-rbac');
      // The forbidden write never went through, before, during or after the restart.
      expect(writes.filter((a) => a.ok)).toEqual([]);
      expect(writes.length).toBeGreaterThan(10);
      // Every request served since the kill was answered after the agent asked etcd to turn auth on.
      expect(served.length).toBeGreaterThan(0);
      expect(served.filter((a) => a.end < enableRequestedAt)).toEqual([]);
      const proxy = after.etcdProxy()!.stats;
      expect(Date.parse(proxy.listeningAt!)).toBeGreaterThanOrEqual(enableRequestedAt);
      figure('restart', {
        pool,
        leader,
        restartedMs,
        authEnabledMs: Date.parse(auth.enabledAt!) - killedAt,
        proxyListeningMs: Date.parse(proxy.listeningAt!) - killedAt,
        firstServedMs: Math.min(...served.map((a) => a.end)) - killedAt,
        leaderBackMs,
        poolCacheBackMs,
        poolCacheTouches: touches,
      });
      figure('restart-window', {
        attemptsSinceKill: since.length,
        servedSinceKill: served.length,
        servedBeforeAuth: served.filter((a) => a.end < enableRequestedAt).length,
        rbacWritesTried: writes.length,
        rbacWritesServed: writes.filter((a) => a.ok).length,
        firstServedAfterAuthMs: Math.min(...served.map((a) => a.end)) - enableRequestedAt,
        refusedReasons: [...new Set(since.filter((a) => !a.ok).map((a) => a.error))].slice(0, 5),
      });
    } finally {
      hammer.stop();
      await hammer.done;
      await link.close();
    }
  }, 240_000);

  it('over the whole run (uploads after the restart included) the hubs wrote only under the granted prefixes and were refused nothing', async () => {
    const granted = (key: string) => COORDINATOR_ETCD_PREFIXES.some((p) => key.startsWith(p));
    const written: string[] = [];
    const uploadedByPool: Record<string, string[]> = {};
    for (const pool of world.pools) {
      const root = rootClient(pool);
      try {
        // Only YurtHub writes /mirror/rv/<key>, next to every key it writes.
        const mirrors = await root.getAll().prefix('/mirror/').keys();
        const keys = mirrors.flatMap((m) => [m, m.slice('/mirror/rv'.length)]);
        written.push(...keys);
        uploadedByPool[pool] = keys.filter((k) => /^\/registry\/(minions|pods)\//.test(k));
      } finally {
        root.close();
      }
    }
    expect(written.filter((k) => !granted(k))).toEqual([]);
    const used = COORDINATOR_ETCD_PREFIXES.filter((p) => written.some((k) => k.startsWith(p)));
    // (pool-00's etcd restarted empty; its hubs upload again only after passing through "pending", which a
    // restart this short does not cause, so its uploads are gone with the old etcd.)
    const observed = { granted: COORDINATOR_ETCD_PREFIXES, used, keys: written.length, uploadedByPool };
    figure('hub-keys-observed', observed);
    const logs = await hubLogs(world);
    const refusals = logs.flatMap(([node, text]) =>
      text
        .split('\n')
        .filter((l) => /permission denied/i.test(l))
        .map((l) => `${node}: ${l.slice(0, 200)}`),
    );
    expect(refusals).toEqual([]);
    // Every grant is used by the real hubs (the pool cache by the leader, the uploads after the restart).
    expect(used).toEqual(COORDINATOR_ETCD_PREFIXES);
  });

  /** An etcd3 client as the pool's root-capable identity, at etcd's own client port (what the agent uses). */
  function rootClient(pool: string): Etcd3 {
    return client(world.hubs.spiritOf(pool).etcd.clientEndpoint, as[pool]!.root);
  }
});

function client(endpoint: string, files: Files): Etcd3 {
  return new Etcd3({
    hosts: [endpoint],
    credentials: {
      rootCertificate: readFileSync(files.cacert),
      certChain: readFileSync(files.cert),
      privateKey: readFileSync(files.key),
    },
    faultHandling: { host: () => noop, global: noop },
  });
}

function endpointSlice(name: string): Obj {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.9'] }],
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  };
}

interface Attempt {
  kind: 'read' | 'write-rbac';
  start: number;
  end: number;
  ok: boolean;
  error?: string;
}

/**
 * Through `link` (a stand-in for the coordinator etcd Service), as the coordinator identity, every 40 ms: a
 * write of an RBAC key (must never succeed) and a read of a granted prefix (succeeds whenever the proxy
 * serves). A fresh client each time, so no connection outlives a restart.
 */
function startHammer(link: Link, hub: Files) {
  const attempts: Attempt[] = [];
  let running = true;
  let n = 0;
  const once = async (kind: Attempt['kind']) => {
    const c = client(link.url('https'), hub);
    const start = Date.now();
    const op =
      kind === 'read'
        ? c.getAll().prefix('/registry/endpointslices').limit(1).keys()
        : c.put(`/registry/clusterrolebindings/window-${n++}`).value('{}').exec();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), 2_000);
    });
    try {
      await Promise.race([op, timeout]);
      attempts.push({ kind, start, end: Date.now(), ok: true });
    } catch (err) {
      attempts.push({
        kind,
        start,
        end: Date.now(),
        ok: false,
        error: (err as Error).message.split('\n')[0]!.slice(0, 120),
      });
    } finally {
      clearTimeout(timer);
      c.close();
    }
  };
  const done = (async () => {
    while (running) {
      await Promise.all([once('read'), once('write-rbac')]);
      await new Promise((r) => setTimeout(r, 40));
    }
  })();
  return {
    attempts,
    done,
    stop() {
      running = false;
    },
  };
}

/** The real etcdctl against `endpoint` with `files`; never throws (exit code and output are the result). */
function etcdctl(
  endpoint: string,
  files: Files,
  args: string[],
  stdin?: string,
): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      requireKubeBinary('etcdctl'),
      [
        `--endpoints=${endpoint}`,
        `--cacert=${files.cacert}`,
        `--cert=${files.cert}`,
        `--key=${files.key}`,
        '--dial-timeout=3s',
        '--command-timeout=5s',
        ...args,
      ],
      { timeout: 15_000 },
      (err, stdout, stderr) => resolve({ ok: !err, output: `${stdout}${stderr}` }),
    );
    child.stdin?.end(stdin ?? '');
  });
}

function firstError(output: string): string {
  // A TLS refusal is retried by etcdctl until its deadline; the handshake error says what happened.
  const tls = /remote error: tls: [^"\\]*|authentication handshake failed: [^"\\]*/.exec(output);
  if (tls) return tls[0].slice(0, 160);
  const connection = /connection error: desc = \\"([^"\\]+)/.exec(output);
  if (connection) return `connection refused by the server: ${connection[1]!.slice(0, 120)}`;
  const line = output.split('\n').find((l) => /^Error|error|denied|failed/i.test(l)) ?? output.split('\n')[0] ?? '';
  return line.replace(/^.*"error":"([^"]+)".*$/, '$1').slice(0, 160);
}

/** etcd's /version as the identity in `files` (the election test's request, with etcdctl's file names). */
function etcdVersionAs(endpoint: string, files: Files): Promise<string> {
  const pem = (f: string) => readFileSync(f, 'utf8');
  return etcdVersion(endpoint, pem(files.cacert), { certPem: pem(files.cert), keyPem: pem(files.key) });
}

/** A GET through a hub's proxy port as the kubelet (the component YurtHub caches for, by its user agent). */
async function kubeletGet(proxyPort: number, path: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${proxyPort}${path}`, {
    headers: { 'User-Agent': 'kubelet/v1.28.9 (linux/amd64) kubernetes/d8cbfbe' },
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Every hub's log, by node. */
async function hubLogs(world: YurtHubWorld): Promise<Array<[string, string]>> {
  const logDir = join(world.dir, 'yurthubs');
  const files = (await readdir(logDir)).filter((f) => f.endsWith('.log'));
  return files.map((f) => [f.replace(/\.log$/, ''), readFileSync(join(logDir, f), 'utf8')]);
}
