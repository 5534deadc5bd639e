import type { KubeConfig } from '@kubernetes/client-node';
import { Informer, keyOf } from '../../../adapters/kubernetes/informer.ts';
import { stableHash } from '../../../core/hash.ts';
import type { ObjectCache, ObjectCacheFactory } from '../kube-api/index.ts';
import { type LocalKubeClient, localKubeClient } from './local-client.ts';
import { NodeHeartbeats, type NodeLike } from './node-heartbeats.ts';
import { evictionGraceSeconds, placePod } from './scheduling.ts';

type Obj = Record<string, any>;

export interface SimKubeletOptions {
  kubeConfig: KubeConfig;
  /** Time from a pod being placed on a node to it reporting Ready. */
  readyDelayMs?: number;
  now?: () => number;
  /** Called for every pod that became Ready (the agent simulation hooks in here). */
  onPodReady?: (pod: Obj) => Promise<void>;
  onError?: (err: Error) => void;
  /**
   * Image tags whose pods never become Ready (they run, but fail readiness): how tests make a rollout's
   * new version unhealthy in sim mode.
   */
  unhealthyVersions?: string[];
  /**
   * Runs the pods it claims for real (process mode, see process-kubelet.ts): their status comes from the
   * runtime instead of the sim's ready delay. Without it (sim mode) nothing below changes.
   */
  runtime?: PodRuntime;
  /**
   * `sim` (default): this class also plays kube-controller-manager (Deployments, eviction) and
   * kube-scheduler. `real`: those run for real (dev/local/real-cluster), so this plays only the nodes' kubelets:
   * node heartbeats (node-heartbeats.ts), the status of pods bound to them, and finishing their graceful
   * deletion.
   */
  controlPlane?: 'sim' | 'real';
  /**
   * Where the nodes, pods and Deployments are read from: by default HTTP informers (list+watch through the
   * kubeconfig, as the real components); a local API in this thread offers its in-process caches instead
   * (LocalCluster.objectCaches), the same objects without serializing every event to a watch line and back.
   * Writes go through the API either way.
   */
  caches?: ObjectCacheFactory;
}

/** What runs a pod's containers for real. Placement, eviction and the Deployment stay the kubelet's. */
export interface PodRuntime {
  /** Whether this runtime runs the pod; the others become Ready as in sim mode. */
  claims(pod: Obj): boolean;
  /** Starts the pod if it is not running yet; returns its status now and calls `changed` whenever it would differ. */
  sync(pod: Obj, changed: () => void): Obj;
  /** The pod is gone (deleted, evicted): stop whatever runs for it. Unknown keys are ignored. */
  release(key: string): Promise<void>;
}

const identity = <T>(o: T) => o;
const always = () => true;

/**
 * The local stand-in for kube-controller-manager's Deployment controller, kube-scheduler, the node
 * lifecycle controller and the kubelets, in `sim` mode: pods never run processes, they become Ready after
 * a delay once placed on a Ready node that their affinity, selector and taints allow. Everything goes
 * through the Kubernetes API, as the real components do, so the reconciler sees real objects.
 */
export class SimKubelet {
  private readonly opts: Required<Omit<SimKubeletOptions, 'onPodReady' | 'onError' | 'runtime' | 'caches'>> &
    Pick<SimKubeletOptions, 'onPodReady' | 'onError' | 'runtime' | 'caches'>;
  private readonly heartbeats?: NodeHeartbeats;
  private readonly api: LocalKubeClient;
  readonly nodes: ObjectCache<Obj>;
  readonly pods: ObjectCache<Obj>;
  readonly deployments: ObjectCache<Obj>;
  private readonly queue = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /**
   * Pods marked Ready whose onPodReady (the sim agent's report) has not completed. The status write and
   * the report are two calls: when the report fails (the API refusing it, say), the pod is Ready already
   * and would never be reported again without this, leaving its pool not bootstrapped for good.
   */
  private readonly unreported = new Set<string>();
  /**
   * Each Deployment's pod-template-hash for the generation it was computed at: a template only changes with
   * the generation, and hashing it (a canonical JSON of the whole template) on every sync was most of what a
   * sync cost.
   */
  private readonly templateHashes = new Map<string, { uid: string; generation: number; hash: string }>();
  /**
   * Each Deployment's (ns/name) pods, by their controller reference, kept from the pod informer's events: a
   * Deployment's sync read all the cluster's pods to find its own, a scan as long as the cluster is large on
   * every pod and Deployment event.
   */
  private readonly podsByOwner = new Map<string, Set<string>>();
  private readonly ownerOfPod = new Map<string, string>();
  private working = false;
  private stopped = false;
  /**
   * Whether every informer has listed once. Until then events only queue: as controllers wait for their caches,
   * so that a pod listed before its node is not taken for a pod whose node is gone (and evicted).
   */
  private synced = false;
  private idleWaiters: Array<() => void> = [];
  readonly stats = {
    podsCreated: 0,
    podsDeleted: 0,
    podsScheduled: 0,
    podsReady: 0,
    evictions: 0,
    statusWrites: 0,
    errors: 0,
  };

  constructor(options: SimKubeletOptions) {
    this.opts = {
      readyDelayMs: 100,
      now: Date.now,
      controlPlane: 'sim',
      ...options,
      unhealthyVersions: options.unhealthyVersions ?? [],
    };
    this.api = localKubeClient(options.kubeConfig);
    const real = this.opts.controlPlane === 'real';
    const caches = options.caches;
    const informer = (
      apiVersion: string,
      kind: string,
      path: string,
      onChange: (o: Obj, type: string) => void,
    ): ObjectCache<Obj> =>
      caches
        ? caches(path, (type, obj) => onChange(obj, type))
        : new Informer<Obj>(
            options.kubeConfig,
            { apiVersion, kind, path, summarize: identity, isRelevant: always },
            {
              onChange: async (type, _key, obj) => onChange(obj, type),
            },
          );
    this.nodes = informer('v1', 'Node', '/api/v1/nodes', (node, type) => {
      // The Node informer's objects are Nodes as the API serves them: metadata.name and uid always set.
      this.heartbeats?.observe(node as NodeLike, type === 'DELETED');
      this.enqueueAllPods();
    });
    this.pods = informer('v1', 'Pod', '/api/v1/pods', (pod, type) => {
      const key = keyOf(pod);
      this.enqueue(`pod:${key}`);
      const owner = controllerOf(pod);
      const ownerKey = owner ? `${pod.metadata.namespace}/${owner}` : undefined;
      this.indexOwner(key, type === 'DELETED' ? undefined : ownerKey);
      if (ownerKey && !real) this.enqueue(`deploy:${ownerKey}`);
    });
    this.deployments = informer('apps/v1', 'Deployment', '/apis/apps/v1/deployments', (d) => {
      if (!real) this.enqueue(`deploy:${keyOf(d)}`);
    });
    if (real)
      this.heartbeats = new NodeHeartbeats({
        api: this.api,
        now: this.opts.now,
        onError: (err) => this.opts.onError?.(err),
      });
  }

  private indexOwner(podKey: string, ownerKey: string | undefined): void {
    const before = this.ownerOfPod.get(podKey);
    if (before === ownerKey) return;
    if (before !== undefined) {
      const pods = this.podsByOwner.get(before);
      pods?.delete(podKey);
      if (pods?.size === 0) this.podsByOwner.delete(before);
      this.ownerOfPod.delete(podKey);
    }
    if (ownerKey === undefined) return;
    this.ownerOfPod.set(podKey, ownerKey);
    let pods = this.podsByOwner.get(ownerKey);
    if (!pods) {
      pods = new Set();
      this.podsByOwner.set(ownerKey, pods);
    }
    pods.add(podKey);
  }

  /** The informers this mode needs: with a real control plane, Deployments are kube-controller-manager's. */
  private informers(): ObjectCache<Obj>[] {
    return this.opts.controlPlane === 'real' ? [this.nodes, this.pods] : [this.nodes, this.pods, this.deployments];
  }

  async start(): Promise<void> {
    for (const inf of this.informers()) void inf.run();
    await Promise.all(this.informers().map((inf) => inf.hasSynced));
    this.synced = true;
    if (this.queue.size && !this.working) void this.work();
    this.heartbeats?.start();
  }

  /**
   * Reports every Ready pod again (onPodReady), through the work queue: a resumed cluster's pods never become
   * Ready again, but their agents restart and report, as the sim agent must for them. A report that fails (the
   * bootstrap ConfigMap deleted meanwhile, an API fault) is retried like any sync until it succeeds or the pod
   * is gone; it never fails the caller, so a stack restart cannot fail on one pool's report.
   */
  reportReadyAgain(): number {
    let queued = 0;
    for (const [key, pod] of this.pods.snapshot()) {
      if (pod.metadata?.deletionTimestamp || !podReady(pod)) continue;
      this.unreported.add(key);
      this.enqueue(`pod:${key}`);
      queued += 1;
    }
    return queued;
  }

  /**
   * Stops renewing the nodes' Leases on the host, leaving them to whoever else renews them: on an OpenYurt edge
   * node the kubelet reaches the host only through its YurtHub, which renews the node Lease itself (or, cut off,
   * has its pool's leader delegate it). False when this kubelet renews none (not on a real control plane).
   */
  stopNodeLeaseRenewals(): boolean {
    if (!this.heartbeats) return false;
    this.heartbeats.stop();
    return true;
  }

  /** Async so that a kubelet with processes to stop (process-kubelet.ts) can override it and be awaited. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const inf of this.informers()) inf.stop();
    for (const t of this.timers) clearTimeout(t);
    this.heartbeats?.stop();
  }

  /** Resolves when the work queue is empty and nothing is being processed (timers may still be armed). */
  idle(): Promise<void> {
    if (!this.working && this.queue.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private enqueue(item: string): void {
    if (this.stopped) return;
    this.queue.add(item);
    if (!this.working && this.synced) void this.work();
  }

  private enqueueAllPods(): void {
    for (const key of this.pods.snapshot().keys()) this.enqueue(`pod:${key}`);
  }

  private later(ms: number, item: string): void {
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        this.enqueue(item);
      },
      Math.max(0, ms),
    );
    this.timers.add(t);
  }

  private async work(): Promise<void> {
    this.working = true;
    while (this.queue.size && !this.stopped) {
      const item = this.queue.values().next().value!;
      this.queue.delete(item);
      const [kind, key] = [item.slice(0, item.indexOf(':')), item.slice(item.indexOf(':') + 1)];
      try {
        if (kind === 'pod') await this.syncPod(key);
        else await this.syncDeployment(key);
      } catch (err) {
        this.stats.errors += 1;
        this.opts.onError?.(err as Error);
        // Conflicts and transient API errors: try again shortly, level-triggered.
        this.later(100, item);
      }
    }
    this.working = false;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private async syncDeployment(key: string): Promise<void> {
    const d = this.deployments.get(key);
    if (!d) this.templateHashes.delete(key);
    if (!d || d.metadata.deletionTimestamp) return;
    const hash = this.templateHash(key, d);
    const owned: Obj[] = [];
    for (const podKey of this.podsByOwner.get(key) ?? []) {
      const p = this.pods.get(podKey);
      if (p && !p.metadata.deletionTimestamp) owned.push(p);
    }
    const current = owned.filter((p) => p.metadata.labels?.['pod-template-hash'] === hash);
    const old = owned.filter((p) => p.metadata.labels?.['pod-template-hash'] !== hash);
    const replicas = d.spec.replicas ?? 1;
    const recreate = d.spec.strategy?.type === 'Recreate';
    if (old.length && (recreate || current.filter(podReady).length >= replicas)) {
      // Recreate: every old pod goes before a new one starts (the pool-spirit never runs two etcds).
      for (const p of old) await this.deletePod(p);
    }
    if (!(recreate && old.length)) {
      for (let i = current.length; i < replicas; i++) await this.createPod(d, hash);
      for (const p of current.slice(replicas)) await this.deletePod(p);
    }
    await this.writeDeploymentStatus(d, owned, current, replicas);
  }

  private templateHash(key: string, d: Obj): string {
    const uid = String(d.metadata.uid);
    const generation = Number(d.metadata.generation ?? 0);
    const known = this.templateHashes.get(key);
    if (known?.uid === uid && known.generation === generation) return known.hash;
    const hash = stableHash(d.spec.template).slice(0, 10);
    this.templateHashes.set(key, { uid, generation, hash });
    return hash;
  }

  private async writeDeploymentStatus(d: Obj, owned: Obj[], current: Obj[], replicas: number): Promise<void> {
    const ready = current.filter(podReady).length;
    const available = ready >= replicas;
    const cond = (type: string, status: boolean, reason: string, message: string) => {
      const prior = (d.status?.conditions ?? []).find((c: Obj) => c.type === type);
      const s = status ? 'True' : 'False';
      const at = prior?.status === s ? prior.lastTransitionTime : new Date(this.opts.now()).toISOString();
      return {
        type,
        status: s,
        reason,
        message,
        lastTransitionTime: at,
        lastUpdateTime: prior?.status === s ? prior.lastUpdateTime : at,
      };
    };
    const status = {
      observedGeneration: d.metadata.generation,
      replicas: owned.length,
      updatedReplicas: current.length,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: Math.max(0, replicas - ready),
      conditions: [
        cond(
          'Available',
          available,
          available ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          available ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.',
        ),
        cond(
          'Progressing',
          true,
          current.length >= replicas ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated',
          'Deployment is progressing.',
        ),
      ],
    };
    const comparable = (s: Obj) =>
      JSON.stringify({ ...s, conditions: (s?.conditions ?? []).map((c: Obj) => [c.type, c.status, c.reason]) });
    if (comparable(status) === comparable(d.status ?? {})) return;
    this.stats.statusWrites += 1;
    await this.api.write(
      'PUT',
      `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}/status`,
      { body: { ...d, status } },
    );
  }

  private async createPod(d: Obj, hash: string): Promise<void> {
    const template = d.spec.template ?? {};
    const suffix = Math.random().toString(36).slice(2, 7);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${d.metadata.name}-${hash}-${suffix}`.slice(0, 253),
        namespace: d.metadata.namespace,
        labels: { ...(template.metadata?.labels ?? {}), 'pod-template-hash': hash },
        annotations: template.metadata?.annotations,
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: d.metadata.name,
            uid: d.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: template.spec,
    };
    this.stats.podsCreated += 1;
    await this.api.write('POST', `/api/v1/namespaces/${d.metadata.namespace}/pods`, { body: pod });
  }

  private async deletePod(p: Obj): Promise<void> {
    this.stats.podsDeleted += 1;
    try {
      await this.api.write('DELETE', podPath(p));
    } catch (err: any) {
      if (err?.code !== 404) throw err;
    }
  }

  private async syncPod(key: string): Promise<void> {
    const pod = this.pods.get(key);
    if (!pod || pod.metadata.deletionTimestamp) {
      this.unreported.delete(key);
      await this.opts.runtime?.release(key);
      if (pod && this.opts.controlPlane === 'real') await this.finishDeletion(pod);
      return;
    }
    const now = this.opts.now();
    const nodes = [...this.nodes.values()];
    if (this.opts.controlPlane === 'real') {
      // kube-scheduler binds; taint-based eviction is kube-controller-manager's. Only bound pods are ours.
      if (!pod.spec?.nodeName || !nodes.some((n) => n.metadata.name === pod.spec.nodeName)) return;
    } else if (!pod.spec?.nodeName) {
      const counts = new Map<string, number>();
      for (const p of this.pods.values())
        if (p.spec?.nodeName) counts.set(p.spec.nodeName, (counts.get(p.spec.nodeName) ?? 0) + 1);
      const placement = placePod(pod, nodes, (n) => counts.get(n) ?? 0);
      if ('reason' in placement) {
        await this.writePodStatus(pod, {
          phase: 'Pending',
          conditions: [condition('PodScheduled', false, 'Unschedulable', placement.reason, now)],
        });
        return;
      }
      this.stats.podsScheduled += 1;
      // As kube-scheduler binds: through pods/binding, which sets spec.nodeName once and marks PodScheduled.
      await this.api.write('POST', `${podPath(pod)}/binding`, {
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
          target: { apiVersion: 'v1', kind: 'Node', name: placement.nodeName },
        },
      });
      this.later(this.opts.readyDelayMs, `pod:${key}`);
      return;
    }
    const node = nodes.find((n) => n.metadata.name === pod.spec.nodeName);
    const grace = this.opts.controlPlane === 'real' ? undefined : evictionGraceSeconds(pod, node);
    if (grace !== undefined) {
      const since =
        Date.parse((node?.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready')?.lastTransitionTime ?? '') ||
        now;
      const evictAt = since + grace * 1000;
      if (evictAt <= now || !node) {
        this.stats.evictions += 1;
        await this.deletePod(pod);
        return;
      }
      if (podReady(pod))
        await this.writePodStatus(pod, {
          ...pod.status,
          conditions: [
            condition('PodScheduled', true, '', '', now),
            condition('Ready', false, 'NodeNotReady', `node ${node.metadata.name} is not ready`, now),
          ],
        });
      if (Number.isFinite(evictAt)) this.later(evictAt - now, `pod:${key}`);
      return;
    }
    if (this.opts.runtime?.claims(pod)) {
      const status = this.opts.runtime.sync(pod, () => this.enqueue(`pod:${key}`));
      const wasReady = podReady(pod);
      await this.writePodStatus(pod, status);
      if (!wasReady && podReady({ status })) {
        this.stats.podsReady += 1;
        this.unreported.add(key);
      }
      if (podReady({ status })) await this.reportReady(key, pod);
      return;
    }
    if (podReady(pod)) {
      await this.reportReady(key, pod);
      return;
    }
    const scheduledAt = Date.parse(pod.metadata.creationTimestamp ?? '') || now;
    if (scheduledAt + this.opts.readyDelayMs > now) {
      this.later(scheduledAt + this.opts.readyDelayMs - now, `pod:${key}`);
      return;
    }
    const startedAt = new Date(now).toISOString();
    const badTag = unhealthyTag(pod, this.opts.unhealthyVersions);
    if (badTag) {
      await this.writePodStatus(pod, {
        phase: 'Running',
        conditions: [
          condition('PodScheduled', true, '', '', now),
          condition(
            'Ready',
            false,
            'UnhealthyVersion',
            `image tag ${badTag} never passes readiness (sim unhealthyVersions)`,
            now,
          ),
        ],
      });
      return;
    }
    await this.writePodStatus(pod, {
      phase: 'Running',
      hostIP: '127.0.0.1',
      podIP: '127.0.0.1',
      startTime: startedAt,
      conditions: [
        condition('PodScheduled', true, '', '', now),
        condition('Initialized', true, '', '', now),
        condition('ContainersReady', true, '', '', now),
        condition('Ready', true, '', '', now),
      ],
      containerStatuses: (pod.spec.containers ?? []).map((c: Obj) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt } },
      })),
    });
    this.stats.podsReady += 1;
    this.unreported.add(key);
    await this.reportReady(key, pod);
  }

  /** Runs onPodReady for a pod still waiting for it; a failure leaves it waiting, and the caller's retry runs it again. */
  private async reportReady(key: string, pod: Obj): Promise<void> {
    if (!this.unreported.has(key)) return;
    await this.opts.onPodReady?.(pod);
    this.unreported.delete(key);
  }

  /**
   * A bound pod being deleted stays (with deletionTimestamp) until its kubelet confirms its containers are
   * gone: the final delete with grace 0, guarded by uid so a same-named successor is never hit.
   */
  private async finishDeletion(pod: Obj): Promise<void> {
    if (!pod.spec?.nodeName) return;
    try {
      await this.api.write('DELETE', podPath(pod), {
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          gracePeriodSeconds: 0,
          preconditions: { uid: pod.metadata.uid },
        },
      });
      this.stats.podsDeleted += 1;
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code !== 404 && code !== 409) throw err;
    }
  }

  private async writePodStatus(pod: Obj, status: Obj): Promise<void> {
    const same =
      JSON.stringify(conditionSummary(status)) === JSON.stringify(conditionSummary(pod.status ?? {})) &&
      status.phase === pod.status?.phase;
    if (same) return;
    this.stats.statusWrites += 1;
    await this.api.write('PUT', `${podPath(pod)}/status`, { body: { ...pod, status } });
  }
}

const podPath = (p: Obj) => `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`;

/** The first container image tag listed in `unhealthy`, if any. */
function unhealthyTag(pod: Obj, unhealthy: string[]): string | undefined {
  if (unhealthy.length === 0) return undefined;
  for (const c of pod.spec?.containers ?? []) {
    const image = String(c.image ?? '');
    const tag = image.includes('@') ? undefined : image.slice(image.lastIndexOf(':') + 1);
    if (tag && image.includes(':') && unhealthy.includes(tag)) return tag;
  }
  return undefined;
}

function controllerOf(pod: Obj): string | undefined {
  return (pod.metadata?.ownerReferences ?? []).find((o: Obj) => o.controller && o.kind === 'Deployment')?.name;
}

export function podReady(pod: Obj): boolean {
  return (pod.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
}

function condition(type: string, status: boolean, reason: string, message: string, now: number): Obj {
  return {
    type,
    status: status ? 'True' : 'False',
    lastTransitionTime: new Date(now).toISOString(),
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

function conditionSummary(status: Obj) {
  return (status.conditions ?? []).map((c: Obj) => [c.type, c.status, c.reason ?? '', c.message ?? '']);
}
