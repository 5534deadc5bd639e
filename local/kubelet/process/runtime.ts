/**
 * The process-mode pod runtime: runs every pool-spirit pod placed by the kubelet (one RunningPoolSpirit
 * each), restarts it with backoff when it fails to start or its etcd dies, stops it when the pod goes, and
 * reports the pod's status from what really runs (as a kubelet would from its containers).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import type { AgentOptions } from '../../../agent/options.ts';
import type { PodRuntime } from '../sim-kubelet.ts';
import { CONTAINERS, isPoolSpiritPod, readPoolSpiritPlan } from './pod-plan.ts';
import { startPoolSpirit, type RunningPoolSpirit } from './pool-spirit-process.ts';

type Obj = Record<string, any>;

export interface PoolSpiritRuntimeOptions {
  /** The host cluster (Secrets are read here) and a kubeconfig file for it (the agent reports here). */
  hostKubeConfig: KubeConfig;
  hostKubeconfigPath: string;
  /** Start each pod's agent with it (default true). */
  startAgent?: boolean;
  agentOptions?: Partial<AgentOptions>;
  /** First restart delay after a failure; doubles per restart up to 30 s. Default 1 s. */
  restartBackoffMs?: number;
  onError?: (err: Error) => void;
  now?: () => number;
}

type Phase = 'starting' | 'running' | 'failed';

interface PodEntry {
  pod: Obj;
  phase: Phase;
  running?: RunningPoolSpirit;
  starting?: Promise<void>;
  message?: string;
  restarts: number;
  retry?: NodeJS.Timeout;
  released: boolean;
  changed: () => void;
}

const MAX_BACKOFF_MS = 30_000;

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
      entry = { pod, phase: 'starting', restarts: 0, released: false, changed };
      this.entries.set(key, entry);
      this.launch(entry);
    }
    entry.pod = pod;
    entry.changed = changed;
    return podStatus(pod, entry, this.opts.now?.() ?? Date.now());
  }

  async release(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    entry.released = true;
    clearTimeout(entry.retry);
    await entry.starting;
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
    entry.starting = (async () => {
      try {
        const plan = await readPoolSpiritPlan(this.host, entry.pod);
        const running = await startPoolSpirit(plan, {
          hostKubeconfigPath: this.opts.hostKubeconfigPath,
          startAgent: this.opts.startAgent,
          agentOptions: this.opts.agentOptions,
        });
        if (entry.released) return void (await running.stop());
        entry.running = running;
        entry.phase = 'running';
        entry.message = undefined;
        void running.etcd.exited.then((how) => this.crashed(entry, running, `etcd exited (${how})`));
      } catch (err) {
        if (entry.released) return;
        this.opts.onError?.(err as Error);
        this.fail(entry, (err as Error).message);
      }
      entry.changed();
    })();
  }

  private async crashed(entry: PodEntry, running: RunningPoolSpirit, message: string): Promise<void> {
    if (entry.released || entry.running !== running) return;
    entry.running = undefined;
    this.fail(entry, message);
    entry.changed();
    await running.stop();
  }

  private fail(entry: PodEntry, message: string): void {
    entry.phase = 'failed';
    entry.message = message;
    const delay = Math.min(MAX_BACKOFF_MS, (this.opts.restartBackoffMs ?? 1000) * 2 ** entry.restarts);
    entry.restarts += 1;
    entry.retry = setTimeout(() => {
      if (entry.released) return;
      this.launch(entry);
      entry.changed();
    }, delay);
  }
}

/** The pod status a kubelet would report for what runs: Ready when etcd, the API and the agent all run. */
export function podStatus(pod: Obj, entry: Pick<PodEntry, 'phase' | 'running' | 'message' | 'restarts'>, now: number): Obj {
  const at = new Date(now).toISOString();
  const startedAt = entry.running?.startedAt.toISOString();
  const agentRuns = !!entry.running?.agent();
  const containerStatuses = (pod.spec.containers as Obj[]).map((c) => {
    const runs = entry.phase === 'running' && (c.name !== CONTAINERS.agent || agentRuns);
    const waiting =
      entry.phase === 'starting' ? { reason: 'ContainerCreating' }
        : entry.phase === 'failed' ? { reason: 'CrashLoopBackOff', message: entry.message }
          : { reason: 'NotStarted', message: 'the agent was not started (process kubelet startAgent: false)' };
    return {
      name: c.name,
      image: c.image,
      imageID: '',
      ready: runs,
      started: runs,
      restartCount: entry.restarts,
      state: runs ? { running: { startedAt } } : { waiting },
    };
  });
  const unready = containerStatuses.filter((c) => !c.ready).map((c) => c.name);
  const ready = unready.length === 0;
  const cond = (type: string, ok: boolean, reason?: string, message?: string) => ({
    type, status: ok ? 'True' : 'False', lastTransitionTime: at, ...(reason ? { reason } : {}), ...(message ? { message } : {}),
  });
  const notReady = ['ContainersNotReady', `containers with unready status: [${unready.join(' ')}]`] as const;
  return {
    phase: entry.phase === 'starting' ? 'Pending' : 'Running',
    hostIP: '127.0.0.1',
    podIP: '127.0.0.1',
    podIPs: [{ ip: '127.0.0.1' }],
    ...(startedAt ? { startTime: startedAt } : {}),
    conditions: [
      cond('PodScheduled', true),
      cond('Initialized', true),
      ready ? cond('ContainersReady', true) : cond('ContainersReady', false, ...notReady),
      ready ? cond('Ready', true) : cond('Ready', false, ...notReady),
    ],
    containerStatuses,
  };
}
