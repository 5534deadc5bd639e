import { Worker } from 'node:worker_threads';
import { KubeConfig } from '@kubernetes/client-node';
import type { ForwarderStats } from '../../../forwarder/forwarder.ts';
import { LOCAL_WORKER_RESOURCE_LIMITS } from '../worker-limits.ts';
import type {
  ClusterWorkerData,
  ClusterWorkerMessage,
  ClusterWorkerRequest,
  StartedCluster,
} from './cluster-worker-protocol.ts';
import type { FleetCluster } from './fleet-types.ts';
import { remoteApiAccess } from './local-api-access.ts';

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
 * nothing of a cluster can outlive the fleet (etcd children have a parent-death signal, dev/local/etcd/launch.ts).
 */
export class ClusterWorkers {
  private readonly threadsInUse: Thread[];
  private nextId = 1;
  private started = 0;
  private stopped = false;

  constructor(threads: number, data: ClusterWorkerData, events: ClusterWorkerEvents) {
    this.threadsInUse = Array.from({ length: Math.max(1, threads) }, (_, i) => {
      const thread: Thread = {
        worker: new Worker(ENTRY, {
          workerData: data,
          name: `cluster-thread-${i + 1}`,
          resourceLimits: LOCAL_WORKER_RESOURCE_LIMITS,
        }),
        pending: new Map(),
      };
      thread.worker.on('message', (msg: ClusterWorkerMessage) => {
        if (msg.kind === 'reply') settle(thread, msg);
        else if (msg.kind === 'log') events.log(msg.line);
        else events.kubeletError(msg.clusterId, new Error(msg.message));
      });
      // A thread that dies takes its clusters with it: say so, and fail what waits on it (progress included)
      // and whatever asks it later.
      thread.worker.on('error', (err) => {
        events.log(`cluster thread ${i + 1} failed: ${err.stack ?? err.message}`);
        gone(thread, err);
      });
      thread.worker.on('exit', (code) => {
        if (this.stopped) return;
        events.log(`cluster thread ${i + 1} exited (code ${code}): its clusters are gone`);
        gone(thread, new Error(`cluster thread ${i + 1} exited (code ${code})`));
      });
      return thread;
    });
  }

  get threads(): number {
    return this.threadsInUse.length;
  }

  /** Starts a cluster in the next thread; its FleetCluster reaches it there. */
  async start(id: string, resumed: boolean): Promise<FleetCluster> {
    const thread = this.threadsInUse[this.started++ % this.threadsInUse.length]!;
    const call = (req: Request) => this.call(thread, req);
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

  private call(thread: Thread, req: Request): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.stopped) return reject(new Error('cluster threads were stopped'));
      if (thread.gone) return reject(thread.gone);
      const id = this.nextId++;
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ ...req, id });
    });
  }

  /** CPU time each thread has used so far (microseconds). */
  cpuUsage(): Promise<NodeJS.CpuUsage[]> {
    return Promise.all(this.threadsInUse.map((t) => t.worker.cpuUsage()));
  }

  /** Ends the threads; stop their clusters first (FleetCluster.stopClients, stopHost) for an orderly end. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.threadsInUse) gone(t, new Error('cluster threads were stopped'));
    await Promise.all(this.threadsInUse.map((t) => t.worker.terminate()));
  }
}

interface Thread {
  worker: Worker;
  /** Requests sent to it and not yet answered. */
  pending: Map<number, { resolve(v: unknown): void; reject(e: Error): void }>;
  /** Why it can answer nothing any more. */
  gone?: Error;
}

function settle(thread: Thread, msg: Extract<ClusterWorkerMessage, { kind: 'reply' }>): void {
  const p = thread.pending.get(msg.id);
  if (!p) return;
  thread.pending.delete(msg.id);
  if (msg.ok) p.resolve(msg.result);
  else p.reject(Object.assign(new Error(msg.error.message), { name: msg.error.name }));
}

function gone(thread: Thread, err: Error): void {
  thread.gone ??= err;
  for (const p of thread.pending.values()) p.reject(err);
  thread.pending.clear();
}
