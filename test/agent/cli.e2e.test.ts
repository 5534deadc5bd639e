import { spawn } from 'node:child_process';
import { rename, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent } from '../../agent/agent.ts';
import { silentLogger } from '../../agent/log.ts';
import { main } from '../../agent/main.ts';
import { parseAgentArgs, UsageError } from '../../agent/options.ts';
import { parsePoolSpiritSpec } from '../../core/poolspirit/parse.ts';
import { agentContainer } from '../../core/render/containers.ts';
import { AGENT_KUBECONFIG } from '../../core/render/layout.ts';
import { kubeconfigYaml } from '../../dev/local/kube-api/index.ts';
import { waitFor } from '../support/wait.ts';
import { agentOptions, type Host, NAMES, NAMESPACE, POOL, startHost, tempDir } from './world.ts';

const MiB = 2 ** 20;

function renderedArgs(extraArgs: Record<string, string> = {}): string[] {
  const parsed = parsePoolSpiritSpec({ nodePool: POOL, agent: { extraArgs } });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const container = agentContainer({
    spec: parsed.spec,
    poolSpiritName: POOL,
    namespace: NAMESPACE,
    bootstrapConfigMap: NAMES.bootstrapConfigMap,
    clusterDomain: 'cluster.local',
    hostNetwork: false,
  });
  return container.args as string[];
}

describe('agent command line', () => {
  it('accepts exactly the args the rendered container passes', () => {
    const options = parseAgentArgs(renderedArgs());
    expect(options).toMatchObject({
      kubeconfig: AGENT_KUBECONFIG,
      poolSpirit: POOL,
      namespace: NAMESPACE,
      bootstrapConfigMap: NAMES.bootstrapConfigMap,
      pool: POOL,
      etcdHealthUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/health$/),
    });
    expect(options.hostKubeconfig).toBeUndefined(); // in-cluster service account
    // The rendered container reaches etcd's gRPC API with a client certificate mounted from the -pki Secret.
    expect(options.etcd).toEqual({
      endpoints: [expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/)],
      caFile: expect.stringMatching(/etcd-ca\.crt$/),
      certFile: expect.stringMatching(/etcd-client\.crt$/),
      keyFile: expect.stringMatching(/etcd-client\.key$/),
    });
    const spec = parsePoolSpiritSpec({ nodePool: POOL });
    if (!spec.ok) throw new Error('default spec must parse');
    expect(options.etcdQuotaBytes).toBe(spec.spec.etcd.storage.quotaBackendBytes);
  });

  it('takes etcd, thresholds and intervals from extraArgs, in both flag spellings', () => {
    const options = parseAgentArgs([
      ...renderedArgs({
        'etcd-endpoints': 'https://127.0.0.1:12379',
        'etcd-ca-file': '/pki/etcd-ca.crt',
        'etcd-cert-file': '/pki/c.crt',
        'etcd-key-file': '/pki/c.key',
      }),
      '--defrag-min-free-ratio',
      '0.3',
      '--defrag-min-free-bytes=32Mi',
      '--defrag-cooldown=2m',
      '--etcd-quota-bytes=1Gi',
      '--interval=500ms',
      '--stale-after=45s',
    ]);
    expect(options.etcd).toEqual({
      endpoints: ['https://127.0.0.1:12379'],
      caFile: '/pki/etcd-ca.crt',
      certFile: '/pki/c.crt',
      keyFile: '/pki/c.key',
    });
    expect(options.defrag).toEqual({ minFreeRatio: 0.3, minFreeBytes: 32 * MiB, cooldownMs: 120_000 });
    expect(options.etcdQuotaBytes).toBe(1024 * MiB);
    expect(options.intervalMs).toBe(500);
    expect(options.staleAfterMs).toBe(45_000);
  });

  it('falls back to the container env for names', () => {
    const options = parseAgentArgs(['--kubeconfig', '/k'], {
      POOLSPIRIT_NAME: 'p',
      POD_NAMESPACE: 'ns',
      BOOTSTRAP_CONFIGMAP: 'cm',
      POOL_NAME: 'pool',
    });
    expect(options).toMatchObject({ poolSpirit: 'p', namespace: 'ns', bootstrapConfigMap: 'cm', pool: 'pool' });
  });

  it('names the flag that is wrong or missing', () => {
    const base = ['--kubeconfig=/k', '--poolspirit=p', '--namespace=ns', '--bootstrap-configmap=cm'];
    const fails = (args: string[]) => {
      try {
        parseAgentArgs(args);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as Error).message.split('\n')[0];
      }
      throw new Error('no error');
    };
    expect(fails(['--poolspirit=p', '--namespace=ns', '--bootstrap-configmap=cm'])).toBe('--kubeconfig is required');
    expect(fails(['--kubeconfig=/k', '--namespace=ns', '--bootstrap-configmap=cm'])).toBe(
      '--poolspirit is required (or env POOLSPIRIT_NAME)',
    );
    expect(fails([...base, '--interval=10'])).toMatch(
      /^--interval must be a positive duration such as 500ms, 10s or 5m; got "10"/,
    );
    expect(fails([...base, '--defrag-min-free-ratio=2'])).toMatch(
      /^--defrag-min-free-ratio must be a number from 0 to 1/,
    );
    expect(fails([...base, '--etcd-quota-bytes=lots'])).toMatch(/^--etcd-quota-bytes must be a byte quantity/);
    expect(fails([...base, '--etcd-endpoints=127.0.0.1:2379'])).toMatch(/^--etcd-endpoints must be an http\(s\) URL/);
    expect(fails([...base, '--etcd-endpoints=https://127.0.0.1:2379'])).toBe(
      '--etcd-ca-file is required for https --etcd-endpoints',
    );
    expect(fails([...base, '--etcd-ca-file=/ca'])).toMatch(/need --etcd-endpoints/);
    expect(fails([...base, '--frobnicate=1'])).toMatch(/frobnicate/);
  });
});

describe('agent process', () => {
  let host: Host;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    [host, tmp] = await Promise.all([startHost(), tempDir()]);
  });
  afterAll(async () => {
    await host?.stop();
    await tmp?.remove();
  });

  const run = (args: string[]) => {
    const child = spawn(process.execPath, ['agent/main.ts', ...args], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, exited, out: () => out, err: () => err };
  };

  it('exits 2 with the flag named on a usage error', async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => written.push(chunk) > 0) as typeof process.stderr.write;
    try {
      expect(await main(['--poolspirit=p'], {}, new Promise(() => {}))).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(written.join('')).toMatch(/^agent: --kubeconfig is required\n/);
  });

  it('runs, reports, and exits 0 on SIGTERM', async () => {
    const own = `${tmp.dir}/own.kubeconfig`;
    await writeFile(own, kubeconfigYaml('own', 'http://127.0.0.1:1'));
    const p = run([
      `--kubeconfig=${own}`,
      `--host-kubeconfig=${host.kubeconfigPath}`,
      `--poolspirit=${POOL}`,
      `--namespace=${NAMESPACE}`,
      `--bootstrap-configmap=${NAMES.bootstrapConfigMap}`,
      '--interval=100ms',
      '--stale-after=500ms',
      '--log-level=info',
    ]);
    try {
      // Its own apiserver never answers: after the staleness bound it withdraws the (never seen) leader.
      await waitFor(
        async () => (await host.status()).leader !== undefined || undefined,
        20_000,
        'a status write from the process',
      );
      await waitFor(() => p.out().includes('"message":"agent started"'), 5_000, 'start logged');
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exited).toBe(0);
    expect(p.out()).toContain('"message":"agent stopped"');
    expect(p.out()).not.toMatch(/BEGIN|clusters:|insecure-skip-tls-verify/);
  });

  it('restarts itself in place when its credentials change on disk (renewed certificates)', async () => {
    const own = `${tmp.dir}/rotating.kubeconfig`;
    await writeFile(own, kubeconfigYaml('own', 'http://127.0.0.1:1'));
    const p = run([
      `--kubeconfig=${own}`,
      `--host-kubeconfig=${host.kubeconfigPath}`,
      `--poolspirit=${POOL}`,
      `--namespace=${NAMESPACE}`,
      `--bootstrap-configmap=${NAMES.bootstrapConfigMap}`,
      '--interval=100ms',
      '--log-level=info',
    ]);
    const starts = () => p.out().split('"message":"agent started"').length - 1;
    try {
      await waitFor(() => starts() === 1, 10_000, 'first start logged');
      // As the kubelet updates a Secret volume: the new content replaces the file in one rename.
      await writeFile(`${own}.new`, kubeconfigYaml('own', 'http://127.0.0.1:2'));
      await rename(`${own}.new`, own);
      await waitFor(() => starts() === 2, 20_000, 'a second start after the change');
      expect(p.out()).toContain('credentials changed on disk');
      expect(p.child.exitCode).toBeNull();
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exited).toBe(0);
    expect(p.out()).not.toMatch(/BEGIN|client-key-data/);
  });

  it('refuses to start, naming the file, when a kubeconfig is missing', async () => {
    await expect(
      startAgent({
        kubeconfig: '/nonexistent/kubeconfig',
        hostKubeconfig: host.kubeconfigPath,
        poolSpirit: 'p',
        namespace: 'ns',
        bootstrapConfigMap: 'cm',
        logger: silentLogger,
      }),
    ).rejects.toThrow('own apiserver (--kubeconfig): kubeconfig file /nonexistent/kubeconfig does not exist');
    await expect(
      startAgent({
        kubeconfig: host.kubeconfigPath,
        hostKubeconfig: `${tmp.dir}/missing`,
        poolSpirit: 'p',
        namespace: 'ns',
        bootstrapConfigMap: 'cm',
        logger: silentLogger,
      }),
    ).rejects.toThrow(/host cluster: kubeconfig file .*missing does not exist/);
  });
});

describe('agent lifecycle', () => {
  let host: Host;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let hung: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    [host, tmp] = await Promise.all([startHost(), tempDir()]);
    // An apiserver that accepts connections and never answers: a step blocks on it.
    hung = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => hung?.close(resolve));
    await host?.stop();
    await tmp?.remove();
  });

  it('stop() ends promptly even while a step waits on a silent apiserver, and is safe to repeat', async () => {
    const own = `${tmp.dir}/hung.kubeconfig`;
    await writeFile(own, kubeconfigYaml('hung', `http://127.0.0.1:${(hung.address() as { port: number }).port}`));
    const agent = await startAgent(agentOptions(host, own, { stepTimeoutMs: 30_000 }));
    await waitFor(() => sockets.size > 0, 10_000, 'the agent waiting on the silent apiserver');
    const started = Date.now();
    await agent.stop();
    expect(Date.now() - started).toBeLessThan(2000);
    await agent.stop();
    await agent.done;
  });
});
