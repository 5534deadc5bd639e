/**
 * The process-mode pod runtime: runs every pool-spirit pod placed by the kubelet (one RunningPoolSpirit
 * each), restarts it with backoff when it fails to start or etcd or kube-apiserver exits, stops it when the
 * pod goes, and reports the pod's status from what really runs, as a kubelet would from its containers: a
 * binary that rejected a flag or died shows as that container's CrashLoopBackOff with its exit code and
 * last lines in lastState.terminated, a restart count, and a Warning Event on the pod.
 *
 * The pod's processes restart together (etcd holds the pool's data in memory, so an apiserver that
 * outlived its etcd would serve an empty store anyway): every container's restartCount moves as one.
 */
import { HttpMethod, type KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import type { AgentOptions } from '../../../../agent/options.ts';
import type { CertificateAuthority } from '../../pki.ts';
import type { PodRuntime } from '../sim-kubelet.ts';
import { hostSecrets, isPoolSpiritPod, PodPlanError, type PoolSpiritPod } from './pod-plan.ts';
import { type PodFailure, type PodPhaseInRuntime, podStatus } from './pod-status.ts';
import { type RunningPoolSpirit, startPoolSpirit } from './pool-spirit-process.ts';
import { type ContainerExit, ContainerExitError } from './real-control-plane.ts';
import { type LeaderStandIn, startLeaderStandIn } from './yurthub-stand-in.ts';

type Obj = Record<string, any>;

export interface PoolSpiritRuntimeOptions {
  /** The host cluster (Secrets are read here, Events written) and a kubeconfig file for it (the agent reports here). */
  hostKubeConfig: KubeConfig;
  hostKubeconfigPath: string;
  /** Start each pod's agent with it (default true). */
  startAgent?: boolean;
  agentOptions?: Partial<AgentOptions>;
  /** First restart delay after a failure; doubles per restart up to 30 s. Default 1 s. */
  restartBackoffMs?: number;
  /** Translations and process lifecycle lines, prefixed with the pod. Default: nowhere. */
  log?: (line: string) => void;
  /**
   * With no real YurtHub in the pool: the cluster CA, to run a stand-in YurtHub leader election (a node
   * certificate of the pod's node) in every running pool-spirit. Absent: no leader is elected.
   */
  leaderStandIn?: { clusterCa: CertificateAuthority };
  onError?: (err: Error) => void;
  now?: () => number;
}

interface PodEntry {
  pod: PoolSpiritPod;
  phase: PodPhaseInRuntime;
  running?: RunningPoolSpirit;
  leader?: LeaderStandIn;
  starting?: Promise<void>;
  failure?: PodFailure;
  restarts: number;
  retry?: NodeJS.Timeout;
  /** The crashed incarnation's processes being stopped: the next one starts only once they are gone. */
  stopping?: Promise<void>;
  released: boolean;
  changed: () => void;
}

const MAX_BACKOFF_MS = 30_000;
/** An Event message is bounded like the kubelet's (the apiserver refuses much longer ones). */
const EVENT_MESSAGE_MAX = 1024;

export class PoolSpiritRuntime implements PodRuntime {
  private readonly opts: PoolSpiritRuntimeOptions;
  private readonly host: RawObjectApi;
  private readonly entries = new Map<string, PodEntry>();

  constructor(opts: PoolSpiritRuntimeOptions) {
    this.opts = opts;
    this.host = RawObjectApi.fromKubeConfig(opts.hostKubeConfig);
  }

  claims(pod: Obj): boolean {
    return isPoolSpiritPod(pod);
  }

  sync(pod: Obj, changed: () => void): Obj {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { pod: pod as PoolSpiritPod, phase: 'starting', restarts: 0, released: false, changed };
      this.entries.set(key, entry);
      this.launch(entry);
    }
    entry.pod = pod as PoolSpiritPod;
    entry.changed = changed;
    return podStatus(pod.spec.containers, entry, this.opts.now?.() ?? Date.now());
  }

  async release(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    entry.released = true;
    clearTimeout(entry.retry);
    await entry.starting;
    entry.leader?.stop();
    await entry.running?.stop();
  }

  /** Stops every pod's processes (the kubelet is going away). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((key) => this.release(key)));
  }

  /** What runs for a pod (`namespace/name`), once started. */
  running(key: string): RunningPoolSpirit | undefined {
    return this.entries.get(key)?.running;
  }

  /** Every running pool-spirit. */
  all(): RunningPoolSpirit[] {
    return [...this.entries.values()].flatMap((e) => (e.running ? [e.running] : []));
  }

  /** Starts the agent of a pod started without one (startAgent: false), and reports the pod anew. */
  async startAgent(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry?.running) throw new Error(`pool-spirit pod ${key} is not running`);
    await entry.running.startAgent();
    entry.changed();
  }

  private launch(entry: PodEntry): void {
    entry.phase = 'starting';
    const key = `${entry.pod.metadata.namespace}/${entry.pod.metadata.name}`;
    const log = this.opts.log ? (line: string) => this.opts.log!(`${key}: ${line}`) : undefined;
    entry.starting = (async () => {
      try {
        const running = await startPoolSpirit(entry.pod, {
          secret: hostSecrets(this.host, entry.pod.metadata.namespace),
          hostKubeconfigPath: this.opts.hostKubeconfigPath,
          startAgent: this.opts.startAgent,
          agentOptions: this.opts.agentOptions,
          log,
        });
        if (entry.released) return void (await running.stop());
        entry.running = running;
        entry.leader = await this.electLeader(entry.pod, running);
        entry.phase = 'running';
        entry.failure = undefined;
        void running.exited.then((exit) => this.crashed(entry, running, exit));
      } catch (err) {
        if (entry.released) return;
        this.opts.onError?.(err as Error);
        this.fail(entry, failureOf(err as Error));
      }
      entry.changed();
    })();
  }

  private async crashed(entry: PodEntry, running: RunningPoolSpirit, exit: ContainerExit): Promise<void> {
    if (entry.released || entry.running !== running) return;
    entry.running = undefined;
    entry.leader?.stop();
    entry.leader = undefined;
    // As a kubelet does, the old processes are gone before the next start: kube-apiserver's graceful
    // shutdown can outlast the backoff, and two incarnations of one pod must never run side by side.
    entry.stopping = running.stop().catch((err: unknown) => this.opts.onError?.(err as Error));
    this.fail(entry, {
      container: exit.container,
      reason: 'Error',
      exitCode: exit.exitCode,
      signal: exit.signal,
      message: exit.lastLines,
      at: exit.at,
    });
    entry.changed();
    await entry.stopping;
  }

  private async electLeader(pod: PoolSpiritPod, running: RunningPoolSpirit): Promise<LeaderStandIn | undefined> {
    const nodeName = (pod.spec as { nodeName?: string }).nodeName;
    if (!this.opts.leaderStandIn || !nodeName) return undefined;
    return startLeaderStandIn({
      apiServerUrl: running.apiServerUrl,
      caPem: running.caPem,
      nodeName,
      clusterCa: this.opts.leaderStandIn.clusterCa,
      onError: this.opts.onError,
    });
  }

  private fail(entry: PodEntry, failure: PodFailure): void {
    entry.phase = 'failed';
    entry.failure = failure;
    const delay = Math.min(MAX_BACKOFF_MS, (this.opts.restartBackoffMs ?? 1000) * 2 ** entry.restarts);
    entry.restarts += 1;
    void this.recordEvent(entry, failure, delay);
    entry.retry = setTimeout(() => {
      void (entry.stopping ?? Promise.resolve()).then(() => {
        if (entry.released) return;
        this.launch(entry);
        entry.changed();
      });
    }, delay);
  }

  /** A Warning Event on the pod, as the kubelet writes for a container in back-off or a pod it cannot set up. */
  private async recordEvent(entry: PodEntry, failure: PodFailure, delayMs: number): Promise<void> {
    const { name, namespace } = entry.pod.metadata;
    const at = new Date(this.opts.now?.() ?? Date.now()).toISOString();
    const what = failure.container
      ? `Back-off ${Math.round(delayMs / 1000)}s restarting failed container ${failure.container} in pod ${name}`
      : `Error setting up pod ${name}`;
    const message = `${what}: ${lastLine(failure.message)}`.slice(0, EVENT_MESSAGE_MAX);
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${Date.now().toString(16)}${entry.restarts}`, namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name,
        namespace,
        ...(failure.container ? { fieldPath: `spec.containers{${failure.container}}` } : {}),
      },
      reason: failure.container ? 'BackOff' : 'FailedCreatePodContainer',
      message,
      type: 'Warning',
      source: { component: 'kubelet' },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    };
    try {
      await this.host.requestJson(HttpMethod.POST, `/api/v1/namespaces/${namespace}/events`, { body });
    } catch (err) {
      this.opts.onError?.(err as Error);
    }
  }
}

function failureOf(err: Error): PodFailure {
  if (err instanceof ContainerExitError) {
    return {
      container: err.container,
      reason: 'Error',
      exitCode: err.exitCode,
      signal: null,
      message: err.lastLines,
      at: new Date(),
    };
  }
  return {
    reason: err instanceof PodPlanError ? 'CreateContainerConfigError' : 'StartError',
    message: err.message,
    at: new Date(),
  };
}

/** The binary's own last line says why (e.g. "Error: unknown flag: --bogus"); the rest is in lastState. */
function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => /^(Error|error|E\d{4}|F\d{4}|panic)/.test(l)) ?? lines.at(-1) ?? text;
}
