/**
 * Two local clusters for agent tests: the "host" (PoolSpirit CRD, a PoolSpirit and its rendered bootstrap
 * ConfigMap) and the pool-spirit's "own" apiserver, on a real etcd in /dev/shm when asked.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpMethod, PatchStrategy } from '@kubernetes/client-node';
import { type RunningAgent, startAgent } from '../../agent/agent.ts';
import { silentLogger } from '../../agent/log.ts';
import type { AgentOptions } from '../../agent/options.ts';
import { API_VERSION, DEFAULT_NAMESPACE, KIND, type PoolSpiritStatus } from '../../core/poolspirit/api.ts';
import { renderBootstrap } from '../../core/render/bootstrap.ts';
import { managedLabels } from '../../core/render/labels.ts';
import { objectNames } from '../../core/render/names.ts';
import { type RunningEtcd, startEtcd } from '../../dev/local/etcd/launch.ts';
import { kubeconfigYaml, type LocalCluster, startLocalCluster } from '../../dev/local/kube-api/index.ts';
import { createEtcdStorage } from '../../dev/local/kube-api/storage/etcd.ts';
import type { Storage } from '../../dev/local/kube-api/storage/types.ts';
import { startTestCluster, type TestCluster } from '../support/local-cluster.ts';

export const POOL = 'hangzhou';
export const NAMESPACE = DEFAULT_NAMESPACE;
export const NAMES = objectNames(POOL);

export interface Host extends TestCluster {
  status(): Promise<PoolSpiritStatus>;
  bootstrapHash: string;
}

export async function startHost(): Promise<Host> {
  const host = await startTestCluster();
  await host.api.createJson({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  const bootstrap = renderBootstrap(NAMES, NAMESPACE, managedLabels(POOL));
  await host.api.createJson(bootstrap.configMap as never);
  await host.api.createJson({
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: POOL },
    spec: { nodePool: POOL },
  } as never);
  return {
    ...host,
    bootstrapHash: bootstrap.hash,
    async status() {
      const ps = await host.api.requestJson<{ status?: PoolSpiritStatus }>(
        HttpMethod.GET,
        `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}`,
      );
      return ps.status ?? {};
    },
  };
}

/** Merge-patches the bootstrap ConfigMap (e.g. a new manifest and hash annotation). */
export async function patchConfigMap(host: TestCluster, patch: Record<string, unknown>): Promise<void> {
  await host.api.requestJson(
    HttpMethod.PATCH,
    `/api/v1/namespaces/${NAMESPACE}/configmaps/${NAMES.bootstrapConfigMap}`,
    {
      body: patch,
      contentType: PatchStrategy.MergePatch,
    },
  );
}

export interface Own {
  cluster: LocalCluster;
  etcd?: RunningEtcd;
  kubeconfigPath: string;
  stop(): Promise<void>;
}

/** A free loopback port, for an apiserver that starts after the agent. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startOwn(opts: { etcd?: RunningEtcd; port?: number; dir: string }): Promise<Own> {
  let storage: Storage | undefined;
  if (opts.etcd) storage = await createEtcdStorage({ endpoints: [opts.etcd.endpoint] });
  const cluster = await startLocalCluster({ name: 'own', storage, port: opts.port ?? 0 });
  const kubeconfigPath = join(opts.dir, 'own.kubeconfig');
  await writeFile(kubeconfigPath, kubeconfigYaml('own', cluster.url), { mode: 0o600 });
  return {
    cluster,
    etcd: opts.etcd,
    kubeconfigPath,
    async stop() {
      await cluster.stop();
      await storage?.close();
    },
  };
}

export async function tempDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-agent-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export { startEtcd };

/** Agent options for tests: fast loops, silent logs. */
export function agentOptions(
  host: TestCluster,
  ownKubeconfig: string,
  extra: Partial<AgentOptions> = {},
): AgentOptions {
  return {
    kubeconfig: ownKubeconfig,
    hostKubeconfig: host.kubeconfigPath,
    poolSpirit: POOL,
    namespace: NAMESPACE,
    bootstrapConfigMap: NAMES.bootstrapConfigMap,
    pool: POOL,
    intervalMs: 100,
    bootstrapIntervalMs: 100,
    reportIntervalMs: 2000,
    staleAfterMs: 1500,
    backoff: { initialMs: 50, maxMs: 200 },
    stepTimeoutMs: 10_000,
    logger: silentLogger,
    ...extra,
  };
}

export async function withAgent<T>(options: AgentOptions, fn: (agent: RunningAgent) => Promise<T>): Promise<T> {
  const agent = await startAgent(options);
  try {
    return await fn(agent);
  } finally {
    await agent.stop();
  }
}
