/**
 * The rendered pool-spirit, run for real: the built kube-apiserver 1.36 and etcd 3.6 as OS processes with the
 * exact args the renderer writes (paths of mounted volumes and ports translated, nothing else), and the
 * real agent bootstrapping the real apiserver. A flag that kube-apiserver or etcd rejects fails here.
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BUNDLE_VERSION, DEFAULT_BUNDLES } from '../../../core/poolspirit/defaults.ts';
import { ContainerExitError, startRealControlPlane } from '../../../dev/local/kubelet/process/real-control-plane.ts';
import { agentOptions, type Host, startHost, withAgent } from '../../agent/world.ts';
import { type RealApiserver, renderedPod, startRealApiserver } from '../../support/real-apiserver.ts';
import { waitFor } from '../../support/wait.ts';

describe('the rendered pool-spirit on the real kube-apiserver and etcd', () => {
  let host: Host;
  let real: RealApiserver;
  const lines: string[] = [];
  const kubectl = (...args: string[]) => real.kubectl(...args);
  /** `kubectl auth can-i` answers on stdout and exits 1 for "no". */
  const canI = (...args: string[]) =>
    kubectl('auth', 'can-i', ...args).then(
      (out) => out.trim(),
      (err: { code?: number; stdout?: string }) => (err.code === 1 ? String(err.stdout).trim() : Promise.reject(err)),
    );

  beforeAll(async () => {
    [host, real] = await Promise.all([startHost(), startRealApiserver({ log: (l) => lines.push(l) })]);
  }, 120_000);

  afterAll(async () => {
    await real?.stop();
    await host?.stop();
  });

  it('becomes ready (/readyz) and reports the built release', async () => {
    const version = JSON.parse(await kubectl('version', '-o', 'json')) as {
      serverVersion: { gitVersion: string };
      clientVersion: { gitVersion: string };
    };
    expect(version.serverVersion.gitVersion).toBe('v1.36.3');
    expect(version.clientVersion.gitVersion).toBe('v1.36.3');
    expect(await kubectl('get', '--raw', '/readyz')).toBe('ok');
  });

  it('runs exactly the rendered args: only mounted paths and ports differ, and each change is logged', async () => {
    for (const [name, pid] of [
      ['kube-apiserver', real.plane.pids.apiServer],
      ['etcd', real.plane.pids.etcd],
    ] as const) {
      const running = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean).slice(1);
      const renderedArgs = real.pod.containers.find((c) => c.name === name)!.args!;
      expect(running).toHaveLength(renderedArgs.length);
      const changed = renderedArgs.filter((arg, i) => running[i] !== arg).map((arg) => arg.slice(2, arg.indexOf('=')));
      expect(changed.sort()).toEqual(real.plane.translations[name].map((t) => t.flag).sort());
      for (const t of real.plane.translations[name]) {
        expect(t.rendered, t.flag).toMatch(/^\/|:\d+|^\d+$/);
        expect(lines).toContain(`${name}: --${t.flag}=${t.rendered} → ${t.translated}`);
      }
    }
    // The flags that make it a pool-spirit are there unchanged.
    const apiArgs = real.pod.containers.find((c) => c.name === 'kube-apiserver')!.args!;
    expect(apiArgs).toContain('--authorization-mode=RBAC');
    expect(apiArgs.some((a) => a.startsWith('--enable-admission-plugins'))).toBe(false);
  });

  it('the real agent applies the bootstrap to it: NodePool CRD Established, system:nodes bound to poolspirit:yurthub', async () => {
    await withAgent(agentOptions(host, real.kubeconfig, { reportIntervalMs: 60_000 }), async () => {
      const status = await waitFor(
        async () => {
          const s = await host.status();
          return s.bootstrap?.appliedHash ? s : undefined;
        },
        60_000,
        'the agent to report the bootstrap applied',
      );
      expect(status.bootstrap?.appliedHash).toBe(host.bootstrapHash);
    });
    expect(
      await kubectl(
        'get',
        'crd',
        'nodepools.apps.openyurt.io',
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Established")].status}',
      ),
    ).toBe('True');
    expect(
      await kubectl(
        'get',
        'clusterrolebinding',
        'poolspirit:yurthub',
        '-o',
        'jsonpath={.roleRef.name}/{.subjects[0].name}',
      ),
    ).toBe('poolspirit:yurthub/system:nodes');
    // A node of the pool, as YurtHub authenticates: allowed by that binding, not by anything else.
    expect(await canI('create', 'leases', '-n', 'kube-system', '--as=system:node:n1', '--as-group=system:nodes')).toBe(
      'yes',
    );
    expect(await canI('create', 'leases', '-n', 'kube-system', '--as=someone')).toBe('no');
  }, 120_000);
});

describe('a rendered flag the real binary rejects', () => {
  it("fails the start with the binary's own message, as a crash-looping container shows it", async () => {
    const r = await renderedPod({ apiServer: { extraArgs: { 'no-such-flag': 'x' } } });
    const started = startRealControlPlane({ pod: r.pod, secret: r.secret });
    const err = await started.then(
      async (p) => {
        await p.stop();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContainerExitError);
    expect((err as ContainerExitError).container).toBe('kube-apiserver');
    expect((err as ContainerExitError).lastLines).toContain('unknown flag: --no-such-flag');
  }, 120_000);
});

describe('every bundle on its real release', () => {
  const others = Object.entries(DEFAULT_BUNDLES).filter(([bundle]) => bundle !== DEFAULT_BUNDLE_VERSION);

  it.each(others)(
    'bundle %s: the rendered pod runs the built kube-apiserver of its release and becomes ready',
    async (bundle, versions) => {
      const r = await renderedPod({ version: bundle });
      const plane = await startRealControlPlane({ pod: r.pod, secret: r.secret });
      try {
        // /version is public (system:public-info-viewer): no client certificate needed.
        const version = await new Promise<{ gitVersion: string }>((resolve, reject) => {
          request(`${plane.apiServerUrl}/version`, { ca: plane.caPem }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c));
            res.on('end', () => resolve(JSON.parse(body) as { gitVersion: string }));
          })
            .on('error', reject)
            .end();
        });
        expect(version.gitVersion).toBe(versions.apiServer);
      } finally {
        await plane.stop();
      }
    },
    120_000,
  );
});
