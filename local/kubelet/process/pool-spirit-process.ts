/**
 * One pool-spirit pod, really running: a private etcd (data dir in /dev/shm, the rendered storage flags),
 * the project's local Kubernetes API on it serving the pool's certificate and requiring client
 * certificates from client-ca.crt with RBAC, and the agent in process with the rendered agent kubeconfig
 * pointed at the port the API actually got.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startAgent, type RunningAgent } from '../../../agent/agent.ts';
import type { AgentOptions } from '../../../agent/options.ts';
import { startEtcd, type RunningEtcd } from '../../etcd/launch.ts';
import { startLocalCluster, type LocalCluster } from '../../kube-api/index.ts';
import { createEtcdStorage } from '../../kube-api/storage/etcd.ts';
import type { Storage } from '../../kube-api/storage/types.ts';
import { cleanupOnExit } from './exit-cleanup.ts';
import type { PoolSpiritPlan } from './pod-plan.ts';

/** tmpfs, like the rest of the pod's state: the agent kubeconfig holds a private key. */
const WORK_ROOT = '/dev/shm';
const READY_DEADLINE_MS = 20_000;

export interface StartPoolSpiritOptions {
  /** Kubeconfig file of the host cluster (the agent reads the bootstrap ConfigMap and writes status there). */
  hostKubeconfigPath: string;
  /** Start the agent with the pod (default). Off: etcd and the API only, until startAgent(). */
  startAgent?: boolean;
  /** Overrides of the agent's options (intervals, logger); kubeconfig and etcd access are always process mode's. */
  agentOptions?: Partial<AgentOptions>;
}

export interface RunningPoolSpirit {
  podKey: string;
  etcd: RunningEtcd;
  /** The pool-spirit's apiserver (https://127.0.0.1:<port>). */
  cluster: LocalCluster;
  /** When etcd, the API and (if started) the agent came up. */
  startedAt: Date;
  /** tmpfs dir holding the agent's kubeconfig (removed on stop). */
  workDir: string;
  agent(): RunningAgent | undefined;
  /** Starts the agent if it is not running (idempotent). */
  startAgent(): Promise<RunningAgent>;
  /** Stops the agent, the API and etcd, and removes the work dir; safe to call more than once. */
  stop(): Promise<void>;
}

export async function startPoolSpirit(plan: PoolSpiritPlan, opts: StartPoolSpiritOptions): Promise<RunningPoolSpirit> {
  const workDir = await mkdtemp(join(WORK_ROOT, 'pool-spirit-pod-'));
  const forgetWorkDir = cleanupOnExit(() => rmSync(workDir, { recursive: true, force: true }));
  const undo: Array<() => Promise<void>> = [async () => {
    forgetWorkDir();
    await rm(workDir, { recursive: true, force: true });
  }];
  const unwind = async () => {
    for (const step of undo.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const etcd = await startEtcd({ extraArgs: plan.etcdArgs });
    // launch.ts already kills etcd on 'exit'; a signal that ends the process skips 'exit', hence this too.
    const forgetEtcd = cleanupOnExit(() => {
      killQuietly(etcd.pid);
      rmSync(etcd.dataDir, { recursive: true, force: true });
    });
    undo.push(async () => {
      forgetEtcd();
      await etcd.stop();
    });
    const storage: Storage = await createEtcdStorage({ endpoints: [etcd.endpoint] });
    undo.push(() => storage.close());
    const cluster = await startLocalCluster({
      name: plan.podKey.replace('/', '-'),
      storage,
      tls: plan.tls,
      authorization: 'RBAC',
    });
    undo.push(() => cluster.stop());
    await waitReadyz(cluster.url, plan.tls.caPem);

    const kubeconfig = join(workDir, 'agent.kubeconfig');
    await writeFile(kubeconfig, pointedAt(plan.agentKubeconfig, cluster.url), { mode: 0o600 });
    const agentOptions: AgentOptions = {
      ...plan.agent,
      ...opts.agentOptions,
      kubeconfig,
      hostKubeconfig: opts.hostKubeconfigPath,
      etcd: { endpoints: [etcd.endpoint] },
      etcdHealthUrl: `${etcd.endpoint}/health`,
    };
    let agent: RunningAgent | undefined;
    let agentStarting: Promise<RunningAgent> | undefined;
    const runAgent = () =>
      (agentStarting ??= startAgent(agentOptions).then((a) => {
        agent = a;
        return a;
      }));
    // The agent goes first on the way down: it must not report a pool-spirit whose API is gone.
    undo.push(async () => {
      await (await agentStarting?.catch(() => undefined))?.stop();
    });
    if (opts.startAgent !== false) await runAgent();

    let stopping: Promise<void> | undefined;
    return {
      podKey: plan.podKey,
      etcd,
      cluster,
      startedAt: new Date(),
      workDir,
      agent: () => agent,
      startAgent: runAgent,
      stop: () => (stopping ??= unwind()),
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** The rendered kubeconfig with every cluster's server replaced by the address the API really listens on. */
export function pointedAt(kubeconfigYaml: string, server: string): string {
  const config = parse(kubeconfigYaml) as { clusters?: Array<{ cluster?: { server?: string } }> };
  if (!config?.clusters?.length) throw new Error('agent kubeconfig: expected at least one entry in "clusters"');
  for (const c of config.clusters) c.cluster = { ...c.cluster, server };
  return stringify(config, { lineWidth: 0 });
}

/** GET /readyz over TLS, verifying the serving certificate against the pool CA, until it answers 200. */
async function waitReadyz(url: string, caPem: string): Promise<void> {
  const deadline = Date.now() + READY_DEADLINE_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${url}/readyz`, { ca: caPem, timeout: 2000 }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', reject);
        req.end();
      });
      if (status === 200) return;
      last = `HTTP ${status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`pool-spirit apiserver ${url} not ready after ${READY_DEADLINE_MS} ms: /readyz ${last}`);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
