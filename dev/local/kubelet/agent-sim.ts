import { type KubeConfig, PatchStrategy } from '@kubernetes/client-node';
import { BOOTSTRAP_HASH_ANNOTATION } from '../../../core/render/bootstrap.ts';
import { NAME_LABEL } from '../../../core/render/labels.ts';
import { objectNames } from '../../../core/render/names.ts';
import { mapLimited } from '../../../shared/map-limited.ts';
import { type LocalKubeClient, localKubeClient } from './local-client.ts';

type Obj = Record<string, any>;

export interface AgentSimOptions {
  /** Report a YurtHub leader (the pod's node) as if the pool's YurtHubs had elected one. */
  simulateLeader: boolean;
  now?: () => Date;
}

/**
 * Plays the pool-spirit agent's part in `sim` mode, where no agent process runs: once a pool-spirit pod is
 * Ready it reports the bootstrap hash as applied (and optionally a leader and healthy etcd) into the
 * PoolSpirit status, exactly the fields the real agent writes, with its own field manager.
 */
export async function simulateAgent(kc: KubeConfig, pod: Obj, opts: AgentSimOptions): Promise<string | undefined> {
  if (pod.metadata?.labels?.[NAME_LABEL] !== 'pool-spirit') return undefined;
  const namespace = pod.metadata.namespace;
  const api = localKubeClient(kc);
  const target = agentTarget(pod) ?? (await targetFromOwners(api, pod));
  if (!target) return undefined;
  const { poolSpirit, bootstrapConfigMap } = target;
  const configMap: Obj = await api.requestJson(
    'GET',
    `/api/v1/namespaces/${namespace}/configmaps/${bootstrapConfigMap}`,
  );
  const now = (opts.now?.() ?? new Date()).toISOString();
  const status: Obj = {
    bootstrap: { appliedHash: configMap.metadata?.annotations?.[BOOTSTRAP_HASH_ANNOTATION], appliedTime: now },
    etcd: { healthy: true, alarms: [], observedTime: now },
  };
  if (opts.simulateLeader) status.leader = { holder: pod.spec?.nodeName, renewTime: now, transitions: 0 };
  await api.write('PATCH', `/apis/poolspirit.io/v1alpha1/poolspirits/${poolSpirit}/status`, {
    body: { status },
    contentType: PatchStrategy.MergePatch,
    query: { fieldManager: 'pool-spirit-agent' },
  });
  return poolSpirit;
}

interface AgentTarget {
  poolSpirit: string;
  bootstrapConfigMap: string;
}

/** What the real agent is told by its environment (core/render/containers.ts): its PoolSpirit and ConfigMap. */
function agentTarget(pod: Obj): AgentTarget | undefined {
  const env: Obj[] = (pod.spec?.containers ?? []).find((c: Obj) => c.name === 'agent')?.env ?? [];
  const value = (name: string) => env.find((e) => e.name === name)?.value;
  const poolSpirit = value('POOLSPIRIT_NAME');
  const bootstrapConfigMap = value('BOOTSTRAP_CONFIGMAP');
  return typeof poolSpirit === 'string' && typeof bootstrapConfigMap === 'string'
    ? { poolSpirit, bootstrapConfigMap }
    : undefined;
}

/** A pod whose agent container lost its environment (spec.overrides): the PoolSpirit that owns its Deployment. */
async function targetFromOwners(api: LocalKubeClient, pod: Obj): Promise<AgentTarget | undefined> {
  const deploymentName = await owningDeployment(api, pod);
  if (!deploymentName) return undefined;
  const deployment: Obj = await api.requestJson(
    'GET',
    `/apis/apps/v1/namespaces/${pod.metadata.namespace}/deployments/${deploymentName}`,
  );
  const poolSpirit = (deployment.metadata?.ownerReferences ?? []).find((o: Obj) => o.kind === 'PoolSpirit')?.name;
  return poolSpirit ? { poolSpirit, bootstrapConfigMap: objectNames(poolSpirit).bootstrapConfigMap } : undefined;
}

/**
 * The pod's Deployment: its direct owner in sim mode, its ReplicaSet's owner when a real
 * kube-controller-manager made the pod.
 */
async function owningDeployment(api: LocalKubeClient, pod: Obj): Promise<string | undefined> {
  const owners: Obj[] = pod.metadata.ownerReferences ?? [];
  const direct = owners.find((o) => o.kind === 'Deployment')?.name;
  if (direct) return direct;
  const replicaSet = owners.find((o) => o.kind === 'ReplicaSet')?.name;
  if (!replicaSet) return undefined;
  const rs: Obj = await api.requestJson(
    'GET',
    `/apis/apps/v1/namespaces/${pod.metadata.namespace}/replicasets/${replicaSet}`,
  );
  return (rs.metadata?.ownerReferences ?? []).find((o: Obj) => o.kind === 'Deployment')?.name;
}

/**
 * The sim agents' periodic report: as the real agent refreshes an unchanged leader every report interval
 * (30 s), each simulated leader is renewed while its pool-spirit pod is Ready — and stops being renewed, so
 * goes stale as in a real pool, once that pod is gone or not Ready. Without this every simulated leader
 * would look stale a minute after its pod started.
 */
export interface SimLeaderRenewalOptions {
  /** Whether the pod (ns/name) exists and is Ready now (the sim kubelet's pod cache). */
  podReady(podKey: string): boolean;
  everyMs?: number;
  now?: () => Date;
  onError?: (err: Error) => void;
}

export class SimLeaderRenewals {
  private readonly api: LocalKubeClient;
  /** PoolSpirit name → the pod (ns/name) and node that reported it. */
  private readonly leaders = new Map<string, { podKey: string; holder: string }>();
  private readonly timer: NodeJS.Timeout;
  private readonly opts: SimLeaderRenewalOptions;

  constructor(kc: KubeConfig, opts: SimLeaderRenewalOptions) {
    this.api = localKubeClient(kc);
    this.opts = opts;
    this.timer = setInterval(
      () => void this.renew().catch((err) => opts.onError?.(err as Error)),
      opts.everyMs ?? 30_000,
    );
    this.timer.unref();
  }

  /** simulateAgent's result for a Ready pod: from now on its leader is renewed. */
  track(poolSpirit: string | undefined, pod: Obj): void {
    if (poolSpirit && pod.spec?.nodeName)
      this.leaders.set(poolSpirit, {
        podKey: `${pod.metadata.namespace}/${pod.metadata.name}`,
        holder: pod.spec.nodeName,
      });
  }

  /** The pool's YurtHubs stop renewing: its leader goes stale (how a test injects a stale or lost leader). */
  forget(poolSpirit: string): void {
    this.leaders.delete(poolSpirit);
  }

  private sweeping = false;

  private async renew(): Promise<void> {
    // A sweep slower than the period (a busy machine) is not overlapped by the next one.
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const due = [...this.leaders].filter(([, leader]) => this.opts.podReady(leader.podKey));
      await mapLimited(due, 4, ([poolSpirit, leader]) => this.renewOne(poolSpirit, leader.holder));
    } finally {
      this.sweeping = false;
    }
  }

  private async renewOne(poolSpirit: string, holder: string): Promise<void> {
    const renewTime = (this.opts.now?.() ?? new Date()).toISOString();
    await this.api
      .write('PATCH', `/apis/poolspirit.io/v1alpha1/poolspirits/${poolSpirit}/status`, {
        body: {
          status: {
            leader: { holder, renewTime, transitions: 0 },
            etcd: { healthy: true, alarms: [], observedTime: renewTime },
          },
        },
        contentType: PatchStrategy.MergePatch,
        query: { fieldManager: 'pool-spirit-agent' },
      })
      .catch((err: { code?: number }) => {
        if (err?.code === 404) this.leaders.delete(poolSpirit);
        else throw err;
      });
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
