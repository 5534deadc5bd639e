import { Worker } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import type { Handler } from '../lambda-runtime.ts';
import { LOCAL_WORKER_RESOURCE_LIMITS } from '../worker-limits.ts';
import type { ContainerKind, ContainerSettings } from './containers.ts';
import type { InvokeMessage, ResultMessage } from './worker-protocol.ts';

const ENTRY = new URL('./worker-entry.ts', import.meta.url);

/**
 * Execution environments of one function spread over worker threads. The local fleet is one process; with
 * every cluster's API server, forwarder and kubelet on the main thread, a busy reconcile function would
 * share that one core. Containers are assigned to threads round-robin and keep their thread for life.
 */
export class WorkerContainerHost {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private nextId = 1;
  private nextContainer = 0;
  private stopped = false;

  constructor(kind: ContainerKind, settings: ContainerSettings, threads: number) {
    this.workers = Array.from({ length: Math.max(1, threads) }, () => {
      const w = new Worker(ENTRY, { workerData: { kind, settings }, resourceLimits: LOCAL_WORKER_RESOURCE_LIMITS });
      w.on('message', (msg: ResultMessage) => this.settle(msg));
      w.on('error', (err) => this.failAll(err));
      w.unref();
      return w;
    });
  }

  /** A new container: a handler bound to one thread, with its own handler instance there. */
  newContainer(): Handler {
    const container = this.nextContainer++;
    const worker = this.workers[container % this.workers.length];
    return (event: unknown, context: Context) =>
      new Promise((resolve, reject) => {
        if (this.stopped) return reject(new Error('function worker threads were stopped'));
        const id = this.nextId++;
        this.pending.set(id, { resolve, reject });
        const { getRemainingTimeInMillis, done: _d, fail: _f, succeed: _s, ...plain } = context;
        const msg: InvokeMessage = {
          id,
          container,
          event,
          context: plain,
          deadline: Date.now() + getRemainingTimeInMillis(),
        };
        worker.postMessage(msg);
      });
  }

  private settle(msg: ResultMessage): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(Object.assign(new Error(msg.error.message), msg.error));
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** CPU time each thread has used so far (microseconds). */
  cpuUsage(): Promise<NodeJS.CpuUsage[]> {
    return Promise.all(this.workers.map((w) => w.cpuUsage()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.failAll(new Error('function worker threads were stopped'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
