/**
 * etcd auth for yurt-coordinator-compatible pools: the plan (pure), then the agent's step and the etcd proxy
 * against a real etcd with a pool-spirit's TLS setup (tls-etcd.ts): auth goes on with the users and the
 * bounded role, an agent restart only checks, drift is undone, an etcd restarted empty is set up again; the
 * proxy serves nothing before etcd bounds its identity and relays hub requests as that bounded identity.
 */
import { connect } from 'node:net';
import { type Etcd3, EtcdPermissionDeniedError } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEtcdClient } from '../../agent/adapters/etcd.ts';
import { createEtcdAuthAccess } from '../../agent/adapters/etcd-auth.ts';
import { startAgent } from '../../agent/agent.ts';
import { type EtcdAuthSpec, planEtcdAuth, prefixRange, READWRITE } from '../../agent/decide/etcd-auth.ts';
import { proxyMain } from '../../agent/etcd-proxy/main.ts';
import { parseEtcdProxyArgs } from '../../agent/etcd-proxy/options.ts';
import { type RunningEtcdProxy, startEtcdProxy } from '../../agent/etcd-proxy/proxy.ts';
import { silentLogger } from '../../agent/log.ts';
import { parseAgentArgs, UsageError } from '../../agent/options.ts';
import { newStats } from '../../agent/stats.ts';
import { EtcdAuthStep } from '../../agent/steps/etcd-auth.ts';
import { APISERVER_ETCD_CLIENT_USER } from '../../core/render/pki-spec.ts';
import { ETCD_PROXY_COMMAND } from '../../core/yurt-coordinator/contract.ts';
import { COORDINATOR_ETCD_PREFIXES, COORDINATOR_ETCD_PROXY_USER } from '../../core/yurt-coordinator/etcd-auth.ts';
import { freePorts } from '../../dev/local/processes/free-ports.ts';
import { waitFor } from '../support/wait.ts';
import { type Identity, startTlsEtcd, type TlsEtcd } from './tls-etcd.ts';

const SPEC: EtcdAuthSpec = {
  rootUsers: [APISERVER_ETCD_CLIENT_USER],
  limitedUser: COORDINATOR_ETCD_PROXY_USER,
  prefixes: COORDINATOR_ETCD_PREFIXES,
};

describe('planEtcdAuth', () => {
  const converged = {
    enabled: true,
    users: {
      root: ['root'],
      [APISERVER_ETCD_CLIENT_USER]: ['root'],
      [COORDINATOR_ETCD_PROXY_USER]: [SPEC.limitedUser],
    },
    limitedRole: SPEC.prefixes.map((p) => ({ ...prefixRange(p), permType: READWRITE })),
  };

  it('sets everything up on an empty etcd, auth enable last', () => {
    const ops = planEtcdAuth(SPEC, { enabled: false, users: {} });
    expect(ops[0]).toEqual({ op: 'roleAdd', role: SPEC.limitedUser });
    expect(ops.filter((o) => o.op === 'grantPermission')).toHaveLength(SPEC.prefixes.length);
    expect(ops.filter((o) => o.op === 'userAdd').map((o) => (o as { user: string }).user)).toEqual([
      'root',
      APISERVER_ETCD_CLIENT_USER,
      COORDINATOR_ETCD_PROXY_USER,
    ]);
    expect(ops).toContainEqual({ op: 'grantRole', user: COORDINATOR_ETCD_PROXY_USER, role: SPEC.limitedUser });
    expect(ops.at(-1)).toEqual({ op: 'authEnable' });
    expect(ops.filter((o) => o.op === 'authEnable')).toHaveLength(1);
  });

  it('asks nothing of an etcd that is right', () => {
    expect(planEtcdAuth(SPEC, converged)).toEqual([]);
  });

  it('takes back what someone added to the bounded user: another role, another prefix, a weaker permission', () => {
    const secrets = prefixRange('/registry/secrets/');
    const [first, ...rest] = converged.limitedRole;
    const ops = planEtcdAuth(SPEC, {
      ...converged,
      users: { ...converged.users, [COORDINATOR_ETCD_PROXY_USER]: [SPEC.limitedUser, 'root'] },
      limitedRole: [{ ...first!, permType: 'Read' }, ...rest, { ...secrets, permType: READWRITE }],
    });
    expect(ops).toEqual([
      { op: 'grantPermission', role: SPEC.limitedUser, range: prefixRange(SPEC.prefixes[0]!) },
      { op: 'revokePermission', role: SPEC.limitedUser, range: secrets },
      { op: 'revokeRole', user: COORDINATOR_ETCD_PROXY_USER, role: 'root' },
    ]);
  });

  it('refuses a spec that would make the bounded user a root user', () => {
    expect(() => planEtcdAuth({ ...SPEC, rootUsers: [SPEC.limitedUser] }, converged)).toThrow(/cannot also be/);
  });

  it('turns a prefix into the range etcd stores', () => {
    expect(prefixRange('/registry/pods/')).toEqual({ key: '/registry/pods/', rangeEnd: '/registry/pods0' });
    expect(prefixRange('/registry/endpointslices')).toEqual({
      key: '/registry/endpointslices',
      rangeEnd: '/registry/endpointslicet',
    });
  });
});

describe('the command lines the compat render writes', () => {
  const rendered = async () => {
    const { renderPoolSpirit } = await import('../../core/index.ts');
    const { COMPAT_LABEL } = await import('../../core/yurt-coordinator/compat.ts');
    const fx = await import('../core/fixtures.ts');
    const r = await renderPoolSpirit(
      await fx.renderInput({
        nodePool: fx.nodePool('hangzhou', { metadata: { name: 'hangzhou', labels: { [COMPAT_LABEL]: 'compat' } } }),
        yurtCoordinator: { clientCaPem: await fx.clusterCaPem() },
      }),
    );
    const pod = (
      r.objects.find((o) => o.kind === 'Deployment')!.spec as {
        template: { spec: { containers: Array<{ name: string; args: string[]; env?: unknown }> } };
      }
    ).template.spec;
    return (name: string) => pod.containers.find((c) => c.name === name)!.args;
  };

  it('gives the agent the etcd auth spec of core/yurt-coordinator, and the proxy a command line it accepts', async () => {
    const args = await rendered();
    const agent = parseAgentArgs(args('agent'), {
      POOLSPIRIT_NAME: 'hangzhou',
      POD_NAMESPACE: 'ns',
      BOOTSTRAP_CONFIGMAP: 'cm',
    });
    expect(agent.etcdAuth).toEqual({
      rootUsers: [APISERVER_ETCD_CLIENT_USER],
      limitedUser: COORDINATOR_ETCD_PROXY_USER,
      prefixes: [...COORDINATOR_ETCD_PREFIXES],
    });
    const [command, ...rest] = args('etcd-proxy');
    expect(command).toBe(ETCD_PROXY_COMMAND);
    expect(parseEtcdProxyArgs(rest!)).toMatchObject({
      listenUrl: 'https://0.0.0.0:12382',
      refusedPrefix: '/registry/',
    });
  });

  it('refuses part of the auth flags', () => {
    const base = ['--kubeconfig=/k', '--poolspirit=p', '--namespace=n', '--bootstrap-configmap=c'];
    expect(() => parseAgentArgs([...base, '--etcd-auth-limited-user=x'])).toThrow(UsageError);
    expect(() =>
      parseAgentArgs([
        ...base,
        '--etcd-auth-root-users=a',
        '--etcd-auth-limited-user=x',
        '--etcd-auth-limited-prefixes=/a',
      ]),
    ).toThrow(/--etcd-cert-file/);
    expect(() => parseEtcdProxyArgs(['--listen-url=http://0.0.0.0:1'])).toThrow(UsageError);
  });
});

/** An etcd3 client as `who`, verifying the server with `caFile`, failing fast (no retries, no breaker). */
function clientAs(endpoint: string, caFile: string, who: Identity): Etcd3 {
  return openEtcdClient({ endpoints: [endpoint], caFile, certFile: who.certFile, keyFile: who.keyFile });
}

/** A request etcd refuses as not permitted (a put builder is sent with exec()). */
const denied = (p: Promise<unknown> | { exec(): Promise<unknown> }) =>
  expect('exec' in p ? p.exec() : p).rejects.toBeInstanceOf(EtcdPermissionDeniedError);

describe('etcd auth on a real etcd (agent step, etcd proxy)', () => {
  let etcd: TlsEtcd;
  let root: Etcd3;
  const stats = newStats();
  const step = () =>
    new EtcdAuthStep({
      access: createEtcdAuthAccess(root),
      spec: SPEC,
      stats,
      log: silentLogger,
      now: () => new Date(),
    });

  beforeAll(async () => {
    etcd = await startTlsEtcd();
    root = clientAs(etcd.endpoint, etcd.files.etcdCa, etcd.root);
  }, 60_000);
  afterAll(async () => {
    root?.close();
    await etcd?.stop();
  });

  it('turns auth on with root for the apiserver/agent identity and the proxy bounded to the hub prefixes', async () => {
    expect((await root.auth.authStatus()).enabled).toBe(false);
    await step().run();
    expect(stats.etcdAuth.enables).toBe(1);
    expect(Date.parse(stats.etcdAuth.enableRequestedAt!)).toBeLessThanOrEqual(Date.parse(stats.etcdAuth.enabledAt!));
    expect((await root.auth.authStatus()).enabled).toBe(true);
    // The root identity still does anything (kube-apiserver, the agent).
    await root.put('/registry/clusterrolebindings/x').value('y');
    expect(await root.get('/registry/clusterrolebindings/x').string()).toBe('y');
    // The proxy's identity: only the granted prefixes.
    const proxy = clientAs(etcd.endpoint, etcd.files.etcdCa, etcd.proxy);
    try {
      await proxy.put('/registry/endpointslices/default/a').value('1');
      await proxy.put('/mirror/rv/registry/endpointslices/default/a').value('1');
      expect(await proxy.getAll().prefix('/registry/endpointslices').keys()).toEqual([
        '/registry/endpointslices/default/a',
      ]);
      await denied(proxy.get('/registry/clusterrolebindings/x').string());
      await denied(proxy.put('/registry/secrets/default/s').value('stolen'));
      await denied(proxy.getAll().prefix('/registry/').keys());
      await denied(proxy.auth.authDisable());
    } finally {
      proxy.close();
    }
  });

  it('does not start an agent whose own etcd certificate is not a root user (it would lock itself out)', async () => {
    await expect(
      startAgent({
        kubeconfig: '/nonexistent',
        poolSpirit: 'p',
        namespace: 'n',
        bootstrapConfigMap: 'c',
        etcd: { endpoints: [etcd.endpoint], caFile: etcd.files.etcdCa, ...etcd.root },
        etcdAuth: { ...SPEC, rootUsers: ['someone-else'] },
        logger: silentLogger,
      }),
    ).rejects.toThrow(`CN ${APISERVER_ETCD_CLIENT_USER}) is not one of --etcd-auth-root-users`);
  });

  it('after an agent restart only checks: no call, auth still on', async () => {
    const calls = stats.etcdAuth.calls;
    await step().run();
    expect(stats.etcdAuth.calls).toBe(calls);
    expect(stats.etcdAuth.enables).toBe(1);
  });

  it('undoes drift: a root role and a Secrets prefix given to the proxy user are taken back', async () => {
    await root.auth.userGrantRole({ user: COORDINATOR_ETCD_PROXY_USER, role: 'root' });
    const secrets = prefixRange('/registry/secrets/');
    await root.auth.roleGrantPermission({
      name: COORDINATOR_ETCD_PROXY_USER,
      perm: { permType: 'Readwrite', key: Buffer.from(secrets.key), range_end: Buffer.from(secrets.rangeEnd) },
    });
    await step().run();
    expect((await root.auth.userGet({ name: COORDINATOR_ETCD_PROXY_USER })).roles).toEqual([SPEC.limitedUser]);
    const perms = (await root.auth.roleGet({ role: SPEC.limitedUser })).perm.map((p) => p.key.toString());
    expect(perms.sort()).toEqual([...SPEC.prefixes].sort());
  });

  describe('the etcd proxy', () => {
    let proxy: RunningEtcdProxy;
    let port: number;
    let hubClient: Etcd3 | undefined;
    const proxyUrl = () => `https://127.0.0.1:${port}`;
    const refusesConnections = () =>
      new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(false);
        });
        s.once('error', () => resolve(true));
      });

    beforeAll(async () => {
      await etcd.restartEmpty();
      root.close();
      root = clientAs(etcd.endpoint, etcd.files.etcdCa, etcd.root);
      [port] = (await freePorts(1)) as [number];
      proxy = await startEtcdProxy({
        listenUrl: proxyUrl(),
        etcdEndpoint: etcd.endpoint,
        certFile: etcd.proxy.certFile,
        keyFile: etcd.proxy.keyFile,
        trustedCaFile: etcd.files.proxyTrust,
        etcdCaFile: etcd.files.etcdCa,
        refusedPrefix: '/registry/',
        retryMs: 50,
        logger: silentLogger,
      });
    }, 60_000);
    afterAll(async () => {
      hubClient?.close();
      await proxy?.stop();
    });

    it('does not listen while etcd (restarted empty) has auth off; listens once the agent turned it on', async () => {
      expect((await root.auth.authStatus()).enabled).toBe(false);
      // Give it time to have tried many times: it must still refuse connections.
      await new Promise((r) => setTimeout(r, 500));
      expect(proxy.stats.listeningAt).toBeUndefined();
      expect(await refusesConnections()).toBe(true);
      await step().run();
      expect(stats.etcdAuth.enables).toBe(2);
      await proxy.listening;
      expect(Date.parse(proxy.stats.boundedAt!)).toBeGreaterThanOrEqual(Date.parse(stats.etcdAuth.enableRequestedAt!));
    });

    it("relays a hub's requests as the proxy's bounded user: granted prefixes served, everything else refused", async () => {
      hubClient = clientAs(proxyUrl(), etcd.files.etcdCa, etcd.hub);
      // A transaction shaped like YurtHub's create (compare on the key, put the object and its rv mirror).
      const txn = await hubClient
        .if('/registry/endpointslices/default/web', 'Mod', '==', 0)
        .then(
          hubClient.put('/registry/endpointslices/default/web').value('{}'),
          hubClient.put('/mirror/rv/registry/endpointslices/default/web').value('00000000000000000000000000000001'),
        )
        .commit();
      expect(txn.succeeded).toBe(true);
      // Large values pass (the leader's pool-cache transactions can be big; etcd allows 100 MB requests here).
      const big = 'x'.repeat(3 * 2 ** 20);
      await hubClient.put('/registry/pods/default/big').value(big);
      expect((await hubClient.get('/registry/pods/default/big').string())?.length).toBe(big.length);
      // Watches pass too.
      const watcher = await hubClient.watch().prefix('/registry/minions/').create();
      const seen = new Promise<string>((resolve) => watcher.on('put', (kv) => resolve(kv.key.toString())));
      await root.put('/registry/minions/node-a').value('{}');
      expect(await seen).toBe('/registry/minions/node-a');
      await watcher.cancel();
      // Small requests are not held back on either leg (Nagle's algorithm on a relay costs ~40 ms each).
      const started = Date.now();
      for (let i = 0; i < 200; i++) await hubClient.get('/registry/endpointslices/default/web').string();
      expect(Date.now() - started).toBeLessThan(4_000);
      await denied(hubClient.put('/registry/clusterrolebindings/pwn').value('{}'));
      await denied(hubClient.get('/registry/secrets/kube-system/x').string());
      await denied(hubClient.auth.userAdd({ name: 'eve', options: { no_password: true } }));
      await denied(hubClient.maintenance.defragment());
      expect(await root.get('/registry/clusterrolebindings/pwn').string()).toBeNull();
    });

    it('ends with exit code 1 when it cannot listen (its port taken), rather than linger unready', async () => {
      const code = await proxyMain(
        [
          `--listen-url=${proxyUrl()}`,
          `--etcd-endpoint=${etcd.endpoint}`,
          `--cert-file=${etcd.proxy.certFile}`,
          `--key-file=${etcd.proxy.keyFile}`,
          `--trusted-ca-file=${etcd.files.proxyTrust}`,
          `--etcd-ca-file=${etcd.files.etcdCa}`,
          '--refused-prefix=/registry/',
          '--log-level=silent',
        ],
        new Promise<string>(() => undefined),
      );
      expect(code).toBe(1);
    });

    it("demotes even the pool's root-capable client certificate, and refuses a foreign CA's at the TLS handshake", async () => {
      const rootViaProxy = clientAs(proxyUrl(), etcd.files.etcdCa, etcd.root);
      const foreign = clientAs(proxyUrl(), etcd.files.etcdCa, etcd.foreign);
      try {
        await denied(rootViaProxy.put('/registry/clusterrolebindings/pwn').value('{}'));
        const failures = proxy.stats.handshakeFailures;
        await expect(foreign.get('/registry/endpointslices/default/web').string()).rejects.toThrow();
        expect(proxy.stats.handshakeFailures).toBeGreaterThan(failures);
      } finally {
        rootViaProxy.close();
        foreign.close();
      }
    });

    it('closes new connections to an etcd that restarted empty under it, until auth is on again', async () => {
      hubClient?.close();
      await etcd.restartEmpty();
      root.close();
      root = clientAs(etcd.endpoint, etcd.files.etcdCa, etcd.root);
      const refused = proxy.stats.refused;
      const hub = clientAs(proxyUrl(), etcd.files.etcdCa, etcd.hub);
      try {
        // Auth is off in the new etcd: through the proxy this write would succeed, so it must not arrive.
        await expect(hub.put('/registry/clusterrolebindings/window').value('{}')).rejects.toThrow();
        expect(proxy.stats.refused).toBeGreaterThan(refused);
        expect(await root.get('/registry/clusterrolebindings/window').string()).toBeNull();
        await step().run();
        await waitFor(
          async () =>
            await hub
              .put('/registry/endpointslices/default/back')
              .value('{}')
              .then(
                () => true,
                () => false,
              ),
          10_000,
          'the hub served again once auth is on',
          50,
        );
        await denied(hub.put('/registry/clusterrolebindings/window').value('{}'));
      } finally {
        hub.close();
      }
    });
  });
});
