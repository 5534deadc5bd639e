/**
 * The local kubelet in `process` mode: the sim kubelet's Deployment controller, scheduler and node
 * lifecycle (same placement by affinity on a Ready node of the pool, same Pending reasons, same eviction),
 * but a pool-spirit pod really runs: the built etcd and kube-apiserver as OS processes with the args the
 * reconciler rendered (data in /dev/shm), and the agent, which bootstraps that apiserver and reports into
 * the PoolSpirit status. Other pods behave as in sim mode.
 *
 * Everything a pod started is stopped when the pod is deleted or evicted, on stop(), and (last resort) when
 * this process exits or is signalled (dev/local/processes/exit-cleanup.ts).
 */
import type { AgentOptions } from '../../../agent/options.ts';
import type { CertificateAuthority } from '../pki.ts';
import type { RunningPoolSpirit } from './process/pool-spirit-process.ts';
import { PoolSpiritRuntime } from './process/runtime.ts';
import { SimKubelet, type SimKubeletOptions } from './sim-kubelet.ts';

export interface ProcessKubeletOptions extends Omit<SimKubeletOptions, 'runtime'> {
  /** Kubeconfig file of the host cluster (same cluster as kubeConfig): the agents report there. */
  hostKubeconfigPath: string;
  /** Start each pool-spirit's agent with its pod (default true). Off: the pod runs etcd and the API but is not Ready until `startAgent(podKey)`. */
  startAgent?: boolean;
  /** Overrides of every agent's options (intervals, logger, log level). */
  agentOptions?: Partial<AgentOptions>;
  /** First restart delay of a pool-spirit that failed to start or whose etcd or kube-apiserver exited (doubles, max 30 s). Default 1 s. */
  restartBackoffMs?: number;
  /** Arg translations and process lifecycle, one line each, prefixed with the pod. */
  processLog?: (line: string) => void;
  /** A stand-in YurtHub leader election in each pool-spirit, with node certificates of this CA (runtime.ts). */
  leaderStandIn?: { clusterCa: CertificateAuthority };
}

export class ProcessKubelet extends SimKubelet {
  private readonly runtime: PoolSpiritRuntime;

  constructor(options: ProcessKubeletOptions) {
    if (typeof options.hostKubeconfigPath !== 'string' || options.hostKubeconfigPath === '') {
      throw new TypeError(
        'ProcessKubelet: hostKubeconfigPath must be the path of a kubeconfig file for the host cluster',
      );
    }
    const runtime = new PoolSpiritRuntime({
      hostKubeConfig: options.kubeConfig,
      hostKubeconfigPath: options.hostKubeconfigPath,
      startAgent: options.startAgent,
      agentOptions: options.agentOptions,
      restartBackoffMs: options.restartBackoffMs,
      log: options.processLog,
      leaderStandIn: options.leaderStandIn,
      onError: options.onError,
      now: options.now,
    });
    super({ ...options, runtime });
    this.runtime = runtime;
  }

  /** The running pool-spirit of a pod (`namespace/name`), once its processes are up. */
  poolSpirit(podKey: string): RunningPoolSpirit | undefined {
    return this.runtime.running(podKey);
  }

  /** Every running pool-spirit. */
  poolSpirits(): RunningPoolSpirit[] {
    return this.runtime.all();
  }

  /** Starts the agent of a pod that was started without one (startAgent: false); the pod then turns Ready. */
  startAgent(podKey: string): Promise<void> {
    return this.runtime.startAgent(podKey);
  }

  /** Stops watching and placing pods, then every pool-spirit's agent, kube-apiserver and etcd. */
  override async stop(): Promise<void> {
    await super.stop();
    await this.runtime.stopAll();
  }
}
