import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { KubeConfig } from '@kubernetes/client-node';
import { Informer, type InformerStats } from '../adapters/kubernetes/informer.ts';
import { type ChangeNotice, type ChangeType, changeNoticeDetailSchema, changeNoticeRouting } from '../events/index.ts';
import { EventSender, type PutEventsPort, type SenderOptions, type SenderStats } from './sender.ts';
import { type ObjectSummary, type WatchedResource, watchedResources } from './watched-resources.ts';

export interface ForwarderOptions {
  clusterId: string;
  kubeConfig: KubeConfig;
  bus: PutEventsPort;
  eventBusName?: string;
  /** Namespace of the pool-spirit workloads. */
  namespace?: string;
  sender?: SenderOptions;
  watchTimeoutSeconds?: number;
  now?: () => Date;
}

export interface ForwarderStats {
  sender: SenderStats;
  informers: Record<string, InformerStats>;
  resyncNotices: number;
}

/**
 * One per cluster: turns list+watch changes of NodePools, PoolSpirits, Node membership/readiness and of
 * every object the reconciler renders (deleted, or written by anyone else) into small change notices on
 * the bus. After every NodePool relist it sends a RESYNC notice for every pool, since changes may have
 * been missed while the watch was down.
 */
export class Forwarder {
  private readonly opts: ForwarderOptions;
  private readonly sender: EventSender;
  private readonly resources: WatchedResource[];
  private readonly informers: Informer<ObjectSummary>[];
  private resyncNotices = 0;
  private running: Promise<unknown> | undefined;

  constructor(opts: ForwarderOptions) {
    this.opts = opts;
    this.sender = new EventSender(opts.bus, opts.sender);
    this.resources = watchedResources(opts.namespace ?? 'pool-spirit-system', opts.clusterId);
    this.informers = this.resources.map(
      (resource) =>
        new Informer(
          opts.kubeConfig,
          resource,
          {
            onChange: (type, key, summary, before) => this.onChange(resource, type, key, summary, before),
            onRelist: (known) => this.onRelist(resource, known),
          },
          { watchTimeoutSeconds: opts.watchTimeoutSeconds },
        ),
    );
  }

  start(): void {
    this.running ??= Promise.all(this.informers.map((i) => i.run()));
  }

  /** Resolves once every resource has been listed once. */
  async synced(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.hasSynced));
  }

  /** Resolves when every notice taken so far has been accepted by the bus. */
  idle(): Promise<void> {
    return this.sender.idle();
  }

  stats(): ForwarderStats {
    return {
      sender: this.sender.stats(),
      informers: Object.fromEntries(this.informers.map((inf, i) => [this.resources[i]?.kind, { ...inf.stats }])),
      resyncNotices: this.resyncNotices,
    };
  }

  /** Stops watching and flushes what it holds; returns how many notices could not be sent in time. */
  async stop(deadlineMs = 10_000): Promise<number> {
    for (const informer of this.informers) informer.stop();
    await this.running;
    return this.sender.close(deadlineMs);
  }

  private async onChange(
    resource: WatchedResource,
    type: ChangeType,
    key: string,
    summary: ObjectSummary,
    before?: ObjectSummary,
  ) {
    await this.send(resource, type, key, summary);
    // A Node that moved between pools matters to the pool it left as well.
    if (resource.kind === 'Node' && before?.poolName && before.poolName !== summary.poolName) {
      await this.send(resource, type, key, { ...summary, poolName: before.poolName }, `#left:${before.poolName}`);
    }
  }

  private async onRelist(resource: WatchedResource, known: Map<string, ObjectSummary>) {
    if (resource.kind !== 'NodePool') return;
    for (const [key, summary] of known) {
      this.resyncNotices += 1;
      await this.send(resource, 'RESYNC', key, summary, '#resync');
    }
  }

  private async send(resource: WatchedResource, changeType: ChangeType, key: string, s: ObjectSummary, keySuffix = '') {
    const [namespace, name] = key.includes('/') ? key.split('/') : [undefined, key];
    const notice: ChangeNotice = changeNoticeDetailSchema.parse({
      clusterId: this.opts.clusterId,
      kind: resource.kind,
      ...(namespace ? { namespace } : {}),
      name,
      uid: s.uid || 'unknown',
      resourceVersion: s.resourceVersion || '0',
      ...(s.generation !== undefined ? { generation: s.generation } : {}),
      changeType,
      ...(s.poolName ? { poolName: s.poolName } : {}),
      observedAt: (this.opts.now?.() ?? new Date()).toISOString(),
    });
    const entry: PutEventsRequestEntry = {
      Source: changeNoticeRouting.source,
      DetailType: changeNoticeRouting.detailType,
      Detail: JSON.stringify(notice),
      EventBusName: this.opts.eventBusName,
    };
    await this.sender.enqueue(coalescingKey(this.opts.clusterId, resource.kind, key + keySuffix, s.poolName), entry);
  }
}

/**
 * What notices merge under within the coalescing window: the pool, when the change names one. The reconcile
 * function is level-triggered per pool (it reads the whole pool, whatever the notice names), so the pool's
 * Deployment status counts, its Pod's progress and its Node that arrive in one window need one invocation,
 * not one each (docs/decisions/0028-notices-coalesced-per-pool.md). A change that names no pool reaches no
 * rule; it keeps its own key.
 */
export function coalescingKey(clusterId: string, kind: string, objectKey: string, poolName?: string): string {
  return poolName ? `${clusterId}/pool/${poolName}` : `${clusterId}/${kind}/${objectKey}`;
}
