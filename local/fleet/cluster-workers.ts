import { Worker } from 'node:worker_threads';
import { KubeConfig } from '@kubernetes/client-node';
import type { ForwarderStats } from '../../forwarder/forwarder.ts';
import type { FleetCluster } from './fleet.ts';
import { remoteApiAccess } from './local-api-access.ts';
import type {
  ClusterWorkerData,
  ClusterWorkerMessage,
  ClusterWorkerRequest,
  StartedCluster,
} from './cluster-worker-protocol.ts';

const ENTRY = new URL('./cluster-worker-entry.ts', import.meta.url);

/** A request without its id, which the pool adds (Omit of each member: Omit of a union would merge them). */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Request = WithoutId<ClusterWorkerRequest>;

export interface ClusterWorkerEvents {
  log(line: string): void;
  kubeletError(clusterId: string, err: Error): void;
}

/**
 * The fleet's clusters spread over worker threads, so that their API servers, kubelets and forwarders use
 * every core instead of queueing on the main thread with the bus and the state table. Clusters are
 * assigned round-robin and keep their thread for life. Threads end with the process, however it ends:
 * nothing of a cluster can outlive the fleet (etcd children have a parent-death signal, local/etcd/launch.ts).
 */
export class ClusterWorkers {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private nextId = 1;
  private started = 0;
  private stopped = false;

  constructor(threads: number, data: ClusterWorkerData, events: ClusterWorkerEvents) {
    this.workers = Array.from({ length: Math.max(1, threads) }, (_, i) => {
      const w = new Worker(ENTRY, { workerData: data, name: `cluster-thread-${i + 1}` });
      w.on('message', (msg: ClusterWorkerMessage) => {
        if (msg.kind === 'reply') this.settle(msg);
        else if (msg.kind === 'log') events.log(msg.line);
        else events.kubeletError(msg.clusterId, new Error(msg.message));
      });
      // A thread that dies takes its clusters with it: say so, and fail what waits on it (progress included).
      w.on('error', (err) => {
        events.log(`cluster thread ${i + 1} failed: ${err.stack ?? err.message}`);
        this.failAll(err);
      });
      w.on('exit', (code) => {
        if (this.stopped) return;
        events.log(`cluster thread ${i + 1} exited (code ${code}): its clusters are gone`);
        this.failAll(new Error(`cluster thread ${i + 1} exited`));
      });
      return w;
    });
  }

  get threads(): number {
    return this.workers.length;
  }

  /** Starts a cluster in the next thread; its FleetCluster reaches it there. */
  async start(id: string, resumed: boolean): Promise<FleetCluster> {
    const worker = this.workers[this.started++ % this.workers.length]!;
    const call = (req: Request) => this.call(worker, req);
    const started = (await call({ kind: 'start', clusterId: id, resumed })) as StartedCluster;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(started.kubeconfigPath);
    return {
      id,
      url: started.url,
      thread: 'worker',
      api: remoteApiAccess((apiCall) => call({ kind: 'api', clusterId: id, call: apiCall })),
      resumed: started.resumed,
      kubeconfigPath: started.kubeconfigPath,
      kubeConfig,
      forwarder: {
        stop: async (deadlineMs) => (await call({ kind: 'stopForwarder', clusterId: id, deadlineMs })) as number,
        stats: async () => (await call({ kind: 'forwarderStats', clusterId: id })) as ForwarderStats,
      },
      convergence: async () =>
        (await call({ kind: 'convergence', clusterId: id })) as Awaited<ReturnType<FleetCluster['convergence']>>,
      stopClients: async () => void (await call({ kind: 'stopClients', clusterId: id })),
      stopHost: async () => void (await call({ kind: 'stopHost', clusterId: id })),
    };
  }

  private call(worker: Worker, req: Request): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.stopped) return reject(new Error('cluster threads were stopped'));
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...req, id });
    });
  }

  private settle(msg: Extract<ClusterWorkerMessage, { kind: 'reply' }>): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(Object.assign(new Error(msg.error.message), { name: msg.error.name }));
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** CPU time each thread has used so far (microseconds). */
  cpuUsage(): Promise<NodeJS.CpuUsage[]> {
    return Promise.all(this.workers.map((w) => w.cpuUsage()));
  }

  /** Ends the threads; stop their clusters first (FleetCluster.stopClients, stopHost) for an orderly end. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.failAll(new Error('cluster threads were stopped'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
