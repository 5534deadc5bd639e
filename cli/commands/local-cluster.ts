/** `spiritctl local cluster`: serve one local Kubernetes API until SIGINT/SIGTERM. */
import { resolve } from 'node:path';
import type { LocalCluster } from '../../dev/local/kube-api/index.ts';
import type { Storage } from '../../dev/local/kube-api/storage/types.ts';
import { type Command, choiceFlag, intFlag, UsageError } from '../command.ts';

const DEFAULT_KUBECONFIG = './.local/kubeconfig';

function parseEndpoints(raw: string): string[] {
  const endpoints = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (!endpoints.length)
    throw new UsageError('--etcd-endpoints must list at least one URL, e.g. http://127.0.0.1:2379');
  for (const e of endpoints) {
    let u: URL;
    try {
      u = new URL(e);
    } catch {
      throw new UsageError(`--etcd-endpoints: "${e}" is not a URL (expected e.g. http://127.0.0.1:2379)`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new UsageError(`--etcd-endpoints: "${e}" must be an http:// or https:// URL`);
  }
  return endpoints;
}

export const localClusterCommand: Command = {
  path: ['local', 'cluster'],
  summary: 'serve one local Kubernetes API (memory or etcd storage) and write its kubeconfig',
  options: {
    port: { type: 'string', description: 'TCP port on 127.0.0.1; 0 picks a free one', default: '0', valueName: 'N' },
    kubeconfig: {
      type: 'string',
      description: 'where to write the kubeconfig',
      default: DEFAULT_KUBECONFIG,
      valueName: 'FILE',
    },
    store: { type: 'string', description: 'storage backend: memory|etcd', default: 'memory', valueName: 'memory|etcd' },
    'etcd-endpoints': {
      type: 'string',
      description: 'comma-separated etcd URLs (with --store etcd); none starts a private etcd in /dev/shm',
      valueName: 'URLS',
    },
    name: {
      type: 'string',
      description: 'cluster and context name in the kubeconfig',
      default: 'local',
      valueName: 'NAME',
    },
    'control-plane': {
      type: 'string',
      description:
        'local (the embedded API) or real (the built etcd, kube-apiserver, kube-controller-manager, kube-scheduler)',
      default: 'local',
      valueName: 'local|real',
    },
  },
  details: `
Prints one line containing "ready" and the URL once serving; stops cleanly on SIGINT/SIGTERM.

Examples:
  spiritctl local cluster --port 0 --kubeconfig /tmp/kc
  kubectl --kubeconfig /tmp/kc get namespaces
  spiritctl local cluster --store etcd                # private etcd, data in /dev/shm
  spiritctl local cluster --store etcd --etcd-endpoints http://127.0.0.1:2379
  spiritctl local cluster --control-plane real --kubeconfig /tmp/kc   # real Kubernetes, admin kubeconfig
With --control-plane real the port is picked by the OS and the kubeconfig's identity is system:masters.`,

  async run({ values }) {
    const port = intFlag('port', values.port, 0, 65535);
    const store = choiceFlag('store', values.store, ['memory', 'etcd'] as const);
    const kubeconfig = resolve(String(values.kubeconfig));
    const name = String(values.name);
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) {
      throw new UsageError(
        `--name must be a DNS label (lowercase letters, digits, '-', at most 63 characters), got "${name}"`,
      );
    }
    if (values['etcd-endpoints'] !== undefined && store !== 'etcd')
      throw new UsageError('--etcd-endpoints needs --store etcd');
    const controlPlane = choiceFlag('control-plane', values['control-plane'], ['local', 'real'] as const);
    if (controlPlane === 'real') {
      if (store !== 'memory' || port !== 0)
        throw new UsageError(
          '--store and --port apply to the local API only: --control-plane real runs its own etcd and picks its port',
        );
      return serveRealCluster(name, kubeconfig);
    }

    const cleanups: (() => Promise<void>)[] = [];
    let storage: Storage | undefined;
    if (store === 'etcd') {
      const { createEtcdStorage } = await import('../../dev/local/kube-api/storage/etcd.ts');
      let endpoints: string[];
      if (values['etcd-endpoints'] !== undefined) {
        endpoints = parseEndpoints(String(values['etcd-endpoints']));
      } else {
        const { startEtcd } = await import('../../dev/local/etcd/launch.ts');
        const etcd = await startEtcd();
        cleanups.push(() => etcd.stop());
        endpoints = [etcd.endpoint];
      }
      const etcdStorage: Storage = await createEtcdStorage({ endpoints });
      storage = etcdStorage;
      cleanups.unshift(() => etcdStorage.close());
    }
    const { startLocalCluster } = await import('../../dev/local/kube-api/index.ts');
    let cluster: LocalCluster;
    try {
      cluster = await startLocalCluster({ port, storage, name, kubeconfigPath: kubeconfig });
    } catch (err) {
      for (const c of cleanups) await c().catch(() => undefined);
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new UsageError(`--port ${port} is already in use; use --port 0 to pick a free port`);
      throw err;
    }
    process.stdout.write(
      `local cluster "${name}" ready at ${cluster.url} (store: ${store}, kubeconfig: ${kubeconfig})\n`,
    );

    await untilSignalled();
    await cluster.stop();
    for (const c of cleanups) await c().catch((err) => process.stderr.write(`cleanup: ${(err as Error).message}\n`));
    return 0;
  },
};

function untilSignalled(): Promise<void> {
  return new Promise<void>((done) => {
    const onSignal = (sig: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.stderr.write(`received ${sig}, stopping\n`);
      done();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** The real control plane, signed by a fresh CA, until signalled; its admin kubeconfig written to `kubeconfig`. */
async function serveRealCluster(name: string, kubeconfig: string): Promise<number> {
  const { createCertificateAuthority } = await import('../../dev/local/pki.ts');
  const { startRealHostCluster } = await import('../../dev/local/real-cluster/control-plane.ts');
  const { copyFile, mkdir } = await import('node:fs/promises');
  const { dirname } = await import('node:path');
  const cluster = await startRealHostCluster({
    name,
    ca: await createCertificateAuthority(`${name}-ca`),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  try {
    await mkdir(dirname(kubeconfig), { recursive: true });
    await copyFile(cluster.kubeconfigPath, kubeconfig);
    process.stdout.write(
      `local cluster "${name}" ready at ${cluster.url} (control plane: real, kubeconfig: ${kubeconfig})\n`,
    );
    await untilSignalled();
  } finally {
    await cluster.stop();
  }
  return 0;
}
