/**
 * The local fleet's shapes: its options and what it holds per cluster. Apart from fleet.ts so the cluster
 * workers, their protocol and the per-cluster start-up can name them without importing the fleet that starts them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { ForwarderStats } from '../../../forwarder/forwarder.ts';
import type { BusActivity } from '../bus/index.ts';
import type { LocalCluster } from '../kube-api/index.ts';
import type { SimLeaderRenewals } from '../kubelet/agent-sim.ts';
import type { RealNode } from '../kubelet/real/real-node.ts';
import type { SimKubelet } from '../kubelet/sim-kubelet.ts';
import type { RunningYurtManager } from '../openyurt/yurt-manager.ts';
import type { RealHostCluster } from '../real-cluster/control-plane.ts';
import type { ClusterStorage } from './cluster-storage.ts';
import type { LocalApiAccess } from './local-api-access.ts';
import type { ClusterProgress } from './progress.ts';
import type { FleetShape } from './seed.ts';

export interface LocalFleetOptions extends FleetShape {
  clusters: number;
  store?: 'memory' | 'etcd';
  kubeconfigDir?: string;
  stateDir?: string;
  /**
   * Keep the clusters (etcd data), the state table and the CA in stateDir and resume them on the next
   * start, after a crash too (dev/local/fleet/state-dir.ts). Needs store `etcd`: a memory store has nothing to
   * resume from. A resumed cluster keeps its objects; only clusters beyond those kept are seeded.
   */
  persist?: boolean;
  /**
   * How pods run: `sim` (default) makes them Ready after a delay and plays the agent's part; `process` runs
   * each pool-spirit for real (etcd in /dev/shm, a TLS + RBAC local API, the real agent), see
   * dev/local/kubelet/process-kubelet.ts; `real` (control plane `real`, root) runs real nodes — kubelet,
   * containerd, runc — for the pools' nodes instead of seeded ones, dev/local/kubelet/real.
   */
  kubelet?: 'sim' | 'process' | 'real';
  /**
   * Who serves each cluster: `local` (default), the embedded local API; `real`, the built etcd,
   * kube-apiserver (Node,RBAC, NodeRestriction), kube-controller-manager and kube-scheduler, with the
   * product installed from infra/cluster and each component using its own identity (dev/local/real-cluster).
   */
  controlPlane?: 'local' | 'real';
  /**
   * Control plane `real`: opt-in components of infra/cluster installed with the product, as an operator's
   * overlay would (paths from the repository root, e.g. `infra/cluster/components/yurt-coordinator-compat`).
   */
  productComponents?: string[];
  /** Sim kubelet: time from a pod being placed to it reporting Ready. */
  readyDelayMs?: number;
  /** Simulated YurtHub leader per pool (sim mode has no YurtHubs). */
  simulateLeader?: boolean;
  /** Sim mode: how often simulated leaders are renewed while their pod is Ready (default 30 s, the agent's report interval). */
  leaderRenewMs?: number;
  reconcileConcurrency?: number;
  reconcileTimeoutMs?: number;
  tableName?: string;
  /**
   * Worker threads for the reconcile function's containers; 0 (default) runs them on the main thread.
   * Large fleets use them so reconciles do not queue behind every cluster's API server on one core.
   */
  functionThreads?: number;
  /**
   * Where the functions run: `in-process` (default; LocalFunction, the handlers imported) or `rie` (the zips
   * `npm run package` writes, under AWS's Runtime Interface Emulator and runtime client: scripts/lambda-rie.sh).
   */
  lambda?: 'in-process' | 'rie';
  /** With `lambda: 'rie'`: an existing `npm run package` output to run (tests share one); default: packaged afresh. */
  packagedDir?: string;
  /**
   * Worker threads hosting the clusters (API server, storage, sim kubelet, forwarder, progress watch); 0 runs
   * them on the main thread. Default: see defaultClusterThreads. Control plane `local`, kubelet `sim` only.
   */
  clusterThreads?: number;
  /** The forwarders' coalescing window (ms); default the forwarder's own (dev/bench/latency.ts compares windows). */
  forwarderCoalesceWindowMs?: number;
  /** Bus retry base (ms); tests use a few ms. */
  retryBaseDelayMs?: number;
  log?: (line: string) => void;
  /** Sim kubelet, per cluster id: image tags whose pods never become Ready (a rollout's bad version). */
  unhealthyVersions?: Record<string, string[]>;
  /** Read-only tap on the bus: every accepted event, delivery, failed attempt and dead letter (tests scan them). */
  onBusActivity?: (activity: BusActivity) => void;
}

export interface FleetCluster {
  id: string;
  /** The host cluster's apiserver, whichever control plane serves it. */
  url: string;
  /**
   * Where its API server, kubelet, forwarder and progress watch run: on the `main` thread, or in a cluster
   * worker thread (clusterThreads), reached through `api`, `forwarder`, `convergence` and the stops below.
   */
  thread: 'main' | 'worker';
  /** The local API (control plane `local`, main thread). */
  cluster?: LocalCluster;
  /** Its storage (control plane `local`, main thread). */
  storage?: ClusterStorage;
  /** The real host control plane (control plane `real`). */
  real?: RealHostCluster;
  /** OpenYurt's yurt-manager of the `openYurt` release beside it (control plane `real`). */
  yurtManager?: RunningYurtManager;
  /** The local API's request log, fault injection and storage, wherever it runs (control plane `local`). */
  api?: LocalApiAccess;
  /** Started from the objects a previous run kept, not seeded. */
  resumed: boolean;
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  /** Its forwarder, wherever it runs: stopping it ends the cluster's events to the bus (the rest keeps running). */
  forwarder: FleetForwarder;
  /** The kubelet (main thread only: a cluster thread keeps its own). */
  kubelet?: SimKubelet;
  /** Kubelet `real`: the real nodes (kubelet + containerd each) of its pools (dev/local/kubelet/real). */
  realNodes?: RealNode[];
  /** Sim mode, main thread: keeps simulated leaders renewed while their pods are Ready. */
  leaderRenewals?: SimLeaderRenewals;
  /** Wanted, Available and failing pools, from the cluster's progress watch. */
  convergence(): Promise<Omit<ClusterProgress, 'id'>>;
  /** Stops what acts on the cluster (forwarder, kubelet, simulated leaders, progress watch); the API still serves. */
  stopClients(): Promise<void>;
  /** Stops serving: the API and its storage. */
  stopHost(): Promise<void>;
}

export interface FleetForwarder {
  /** Stops watching and flushes what it holds; resolves with how many notices could not be sent in time. */
  stop(deadlineMs?: number): Promise<number>;
  stats(): Promise<ForwarderStats>;
}
