/**
 * What a kubelet does for its Node when a real kube-controller-manager watches it: register the node's
 * status once (Ready, capacity, an address) and renew its Lease in kube-node-lease, so the node lifecycle
 * controller keeps it Ready and untainted. A Ready condition someone else set (a test making a node
 * NotReady) is left as it is: only a node without one gets its first status here.
 */
import type { LocalKubeClient } from './local-client.ts';

/** The parts of a Node the heartbeat reads. */
export interface NodeLike {
  metadata: { name: string; uid: string };
  status?: { conditions?: Array<{ type: string }>; allocatable?: unknown };
}

export interface NodeHeartbeatsOptions {
  api: LocalKubeClient;
  now: () => number;
  onError?: (err: Error) => void;
  /** Lease renewal period. Default 10 s, as the kubelet's (a quarter of the lease duration). */
  intervalMs?: number;
  leaseDurationSeconds?: number;
}

/** Large enough that the scheduler fits every pod the local stack places, as a big node would. */
export const SIMULATED_CAPACITY = { cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '100Gi' } as const;
const FIELD_MANAGER = 'local-kubelet';

export class NodeHeartbeats {
  private readonly opts: Required<Omit<NodeHeartbeatsOptions, 'onError'>> & Pick<NodeHeartbeatsOptions, 'onError'>;
  private readonly nodes = new Map<string, { uid: string }>();
  private timer?: NodeJS.Timeout;

  constructor(opts: NodeHeartbeatsOptions) {
    this.opts = { intervalMs: 10_000, leaseDurationSeconds: 40, ...opts };
  }

  /** A node seen by the kubelet's informer: first status if it has none (or no capacity), and a lease from now on. */
  observe(node: NodeLike, deleted: boolean): void {
    const name: string = node.metadata.name;
    if (deleted) {
      this.nodes.delete(name);
      return;
    }
    const known = this.nodes.has(name);
    this.nodes.set(name, { uid: node.metadata.uid });
    const hasReady = (node.status?.conditions ?? []).some((c) => c.type === 'Ready');
    // A node created with a status but no capacity (as the local seed writes them) fits no pod with requests.
    if (!hasReady || !node.status?.allocatable) void this.guard(() => this.registerStatus(name, hasReady));
    if (!known) void this.guard(() => this.renew(name));
  }

  start(): void {
    this.timer ??= setInterval(() => {
      for (const name of this.nodes.keys()) void this.guard(() => this.renew(name));
    }, this.opts.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async guard(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      // A node deleted meanwhile is not an error; anything else is retried by the next beat.
      if ((err as { code?: number }).code !== 404) this.opts.onError?.(err as Error);
    }
  }

  /** Capacity and addresses; conditions too unless the node has a Ready condition already (someone set it). */
  private async registerStatus(name: string, keepConditions: boolean): Promise<void> {
    const at = new Date(this.opts.now()).toISOString();
    const cond = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: at,
      lastTransitionTime: at,
    });
    const conditions = keepConditions
      ? undefined
      : [
          cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
          cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
          cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
          cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status (local node kubelet)'),
        ];
    const status = {
      ...(conditions ? { conditions } : {}),
      capacity: SIMULATED_CAPACITY,
      allocatable: SIMULATED_CAPACITY,
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: name },
      ],
    };
    await this.opts.api.write('PATCH', `/api/v1/nodes/${name}/status`, {
      body: { status },
      contentType: 'application/merge-patch+json',
    });
  }

  private async renew(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: 'kube-node-lease',
        // As the kubelet: the Node owns its Lease, so deleting the Node lets the garbage collector take it.
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.uid }],
      },
      spec: {
        holderIdentity: name,
        leaseDurationSeconds: this.opts.leaseDurationSeconds,
        renewTime: new Date(this.opts.now()).toISOString().replace('Z', '000Z'),
      },
    };
    await this.opts.api.write('PATCH', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`, {
      body: lease,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: 'true' },
    });
  }
}
