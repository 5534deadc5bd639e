/**
 * One pool-spirit pod, really running: the built etcd and kube-apiserver as OS processes with the args the
 * renderer wrote (real-control-plane.ts translates only mounted paths and ports, and logs it), and the agent
 * in process with its container's own args, translated the same way and parsed by the agent's parser.
 *
 * Two things differ from a cluster, on purpose: the agent's kubeconfig (from the -agent Secret) names the
 * pod's port, so its server is pointed at the port the apiserver really got (logged); and no service
 * account token is issued, so the agent reports to the host through the host kubeconfig file it is given.
 */
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { type RunningAgent, startAgent } from '../../../../agent/agent.ts';
import { credentialFilesOf } from '../../../../agent/credential-files.ts';
import { parseEtcdProxyArgs } from '../../../../agent/etcd-proxy/options.ts';
import { type RunningEtcdProxy, startEtcdProxy } from '../../../../agent/etcd-proxy/proxy.ts';
import { createLogger } from '../../../../agent/log.ts';
import { type AgentOptions, parseAgentArgs } from '../../../../agent/options.ts';
import { ETCD_PROXY_COMMAND } from '../../../../core/yurt-coordinator/contract.ts';
import { ETCD_PROXY_CONTAINER } from '../../../../core/yurt-coordinator/etcd-proxy.ts';
import { translateContainerArgs } from './container-args.ts';
import { CONTAINERS, containerEnv, containerOf, type PoolSpiritPod, podKeyOf } from './pod-plan.ts';
import {
  type ContainerExit,
  type RealControlPlane,
  type SecretData,
  startRealControlPlane,
} from './real-control-plane.ts';

export interface StartPoolSpiritOptions {
  /** Reads a Secret the pod mounts, by name (the host cluster's, in the pod's namespace). */
  secret(name: string): Promise<SecretData>;
  /** Kubeconfig file of the host cluster (the agent reads the bootstrap ConfigMap and writes status there). */
  hostKubeconfigPath: string;
  /** Start the agent with the pod (default). Off: etcd and the apiserver only, until startAgent(). */
  startAgent?: boolean;
  /** Overrides of the agent's options (intervals, logger); its kubeconfig, etcd access and host are always the pod's. */
  agentOptions?: Partial<AgentOptions>;
  /** Translations and process lifecycle, one line each. */
  log?: (line: string) => void;
  readyDeadlineMs?: number;
  /** How often the Secret volumes are synced with their Secrets (the kubelet's sync; default 2 s). */
  secretSyncMs?: number;
}

/** A kubelet syncs a Secret volume within about a minute; the tests that rotate certificates need less. */
const DEFAULT_SECRET_SYNC_MS = 2_000;

/** Runs `fn` every `everyMs` (never two at once) until stop(), which waits for a run under way. */
function everyUntilStopped(everyMs: number, fn: () => Promise<void>, onError: (err: unknown) => void) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = () => {
    timer = setTimeout(() => {
      running = fn()
        .catch(onError)
        .finally(() => {
          if (!stopped) schedule();
        });
    }, everyMs);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export interface RunningPoolSpirit {
  podKey: string;
  /** The pool-spirit's kube-apiserver (https://127.0.0.1:<port>), serving the pool's certificate. */
  apiServerUrl: string;
  /** The pool CA (verifies apiServerUrl). */
  caPem: string;
  /**
   * `endpoint` is etcd as a client outside the pod reaches it (what a Service targets): in a
   * yurt-coordinator-compatible pod the etcd proxy (it listens once etcd auth is on), otherwise etcd's client
   * port. `clientEndpoint` is etcd's own client port (loopback in the pod) either way.
   */
  etcd: { pid: number; endpoint: string; clientEndpoint: string; dataDir: string };
  /** The etcd proxy of a compat pod, running in process; absent in a plain pod. */
  etcdProxy(): RunningEtcdProxy | undefined;
  apiServer: { pid: number };
  /** When etcd, the apiserver and (if started) the agent came up. */
  startedAt: Date;
  /** The pod's tmpfs dir (volumes, data, logs), removed on stop. */
  workDir: string;
  /** Settles when etcd or kube-apiserver ends on its own. */
  exited: Promise<ContainerExit>;
  agent(): RunningAgent | undefined;
  /** Starts the agent if it is not running (idempotent). */
  startAgent(): Promise<RunningAgent>;
  /** Stops the agent, then kube-apiserver and etcd, and removes the pod's tmpfs dir; safe to call more than once. */
  stop(): Promise<void>;
}

export async function startPoolSpirit(pod: PoolSpiritPod, opts: StartPoolSpiritOptions): Promise<RunningPoolSpirit> {
  const log = opts.log ?? (() => undefined);
  const plane = await startRealControlPlane({
    pod: pod.spec,
    secret: opts.secret,
    log,
    readyDeadlineMs: opts.readyDeadlineMs,
  });
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  try {
    // Before the agent: it listens only once the agent has turned etcd auth on, and is waiting for that.
    proxy = await startProxy(pod, plane, log);
    const agentContainer = containerOf(pod, CONTAINERS.agent);
    const translated = translateContainerArgs(agentContainer.args ?? [], plane.layoutFor(agentContainer));
    for (const t of translated.translations) log(`agent: --${t.flag}=${t.rendered} → ${t.translated}`);
    const parsed = parseAgentArgs(translated.args, containerEnv(pod, agentContainer));
    await pointKubeconfigAt(parsed.kubeconfig, plane.apiServerUrl, log);
    const agentOptions: AgentOptions = {
      ...parsed,
      ...opts.agentOptions,
      kubeconfig: parsed.kubeconfig,
      etcd: parsed.etcd,
      hostKubeconfig: opts.hostKubeconfigPath,
    };

    let agent: RunningAgent | undefined;
    let agentStarting: Promise<RunningAgent> | undefined;
    const runAgent = () =>
      (agentStarting ??= startAgent(agentOptions).then((a) => {
        agent = a;
        return a;
      }));
    if (opts.startAgent !== false) await runAgent();
    // The agent's own files, as agent/main.ts watches them in a cluster: renewed, they restart it in place.
    const agentFiles = new Set(credentialFilesOf(agentOptions));
    const syncVolumes = async () => {
      const replaced = await plane.refreshSecretVolumes();
      if (replaced.includes(parsed.kubeconfig)) await pointKubeconfigAt(parsed.kubeconfig, plane.apiServerUrl, log);
      if (!agentStarting || !replaced.some((f) => agentFiles.has(f))) return;
      log('agent: credentials changed on disk (renewed certificates): restarting the agent with them');
      const old = await agentStarting.catch(() => undefined);
      agentStarting = undefined;
      agent = undefined;
      await old?.stop();
      await runAgent();
    };
    const volumeSync = everyUntilStopped(opts.secretSyncMs ?? DEFAULT_SECRET_SYNC_MS, syncVolumes, (err) =>
      log(`volume sync failed (retried): ${(err as Error).message}`),
    );
    const proxyOf = proxy;
    let stopping: Promise<void> | undefined;
    return {
      podKey: podKeyOf(pod),
      apiServerUrl: plane.apiServerUrl,
      caPem: plane.caPem,
      etcd: {
        pid: plane.pids.etcd,
        endpoint: proxyOf?.url ?? plane.etcdClientUrl,
        clientEndpoint: plane.etcdClientUrl,
        dataDir: plane.etcdDataDir,
      },
      etcdProxy: () => proxyOf?.running,
      apiServer: { pid: plane.pids.apiServer },
      startedAt: new Date(),
      exited: plane.exited,
      workDir: plane.workDir,
      agent: () => agent,
      startAgent: runAgent,
      // The hubs' way in goes first, then the agent: it must not report a pool-spirit whose apiserver is gone.
      stop: () =>
        (stopping ??= (async () => {
          await volumeSync.stop();
          await proxyOf?.running.stop();
          await (await agentStarting?.catch(() => undefined))?.stop();
          await plane.stop();
        })()),
    };
  } catch (err) {
    await proxy?.running.stop();
    await plane.stop();
    throw err;
  }
}

/**
 * A compat pod's etcd proxy container, in process as the agent is: its own args, translated the same way
 * (its 0.0.0.0 listener becomes a loopback one), parsed by its own parser. It starts now and listens only
 * once etcd bounds its identity; `url` is where it will.
 */
async function startProxy(
  pod: PoolSpiritPod,
  plane: RealControlPlane,
  log: (line: string) => void,
): Promise<{ running: RunningEtcdProxy; url: string } | undefined> {
  const container = pod.spec.containers.find((c) => c.name === ETCD_PROXY_CONTAINER);
  if (!container) return undefined;
  const translated = translateContainerArgs(container.args ?? [], plane.layoutFor(container));
  for (const t of translated.translations) log(`${ETCD_PROXY_CONTAINER}: --${t.flag}=${t.rendered} → ${t.translated}`);
  const [command, ...args] = translated.args;
  if (command !== ETCD_PROXY_COMMAND)
    throw new Error(`container ${ETCD_PROXY_CONTAINER}: expected "${ETCD_PROXY_COMMAND}" as its first argument`);
  const options = parseEtcdProxyArgs(args);
  const logger = createLogger({ level: options.logLevel, write: (line) => log(`${ETCD_PROXY_CONTAINER}: ${line}`) });
  const running = await startEtcdProxy({ ...options, logger });
  return { running, url: options.listenUrl };
}

/** Rewrites the mounted agent kubeconfig so every cluster's server is the apiserver's real address. */
async function pointKubeconfigAt(file: string, server: string, log: (line: string) => void): Promise<void> {
  const text = await readFile(file, 'utf8');
  // The Secret volume's file is read-only (defaultMode 0440): replace it rather than write through it.
  await unlink(file);
  await writeFile(file, pointedAt(text, server), { mode: 0o600 });
  log(`agent: ${file}: server → ${server}`);
}

/** The kubeconfig with every cluster's server replaced by `server`. */
export function pointedAt(kubeconfigYaml: string, server: string): string {
  const config = parse(kubeconfigYaml) as { clusters?: Array<{ cluster?: { server?: string } }> };
  if (!config?.clusters?.length) throw new Error('agent kubeconfig: expected at least one entry in "clusters"');
  for (const c of config.clusters) c.cluster = { ...c.cluster, server };
  return stringify(config, { lineWidth: 0 });
}
