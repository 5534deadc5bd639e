import { HttpMethod, PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { BOOTSTRAP_HASH_ANNOTATION } from '../../core/render/bootstrap.ts';
import { NAME_LABEL } from '../../core/render/labels.ts';
import { objectNames } from '../../core/render/names.ts';

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
export async function simulateAgent(kc: KubeConfig, pod: Obj, opts: AgentSimOptions): Promise<void> {
  if (pod.metadata?.labels?.[NAME_LABEL] !== 'pool-spirit') return;
  const namespace = pod.metadata.namespace;
  const deploymentName = (pod.metadata.ownerReferences ?? []).find((o: Obj) => o.kind === 'Deployment')?.name;
  if (!deploymentName) return;
  const api = RawObjectApi.fromKubeConfig(kc);
  const deployment: Obj = await api.requestJson(HttpMethod.GET, `/apis/apps/v1/namespaces/${namespace}/deployments/${deploymentName}`);
  const poolSpirit = (deployment.metadata?.ownerReferences ?? []).find((o: Obj) => o.kind === 'PoolSpirit')?.name;
  if (!poolSpirit) return;
  const configMap: Obj = await api.requestJson(HttpMethod.GET, `/api/v1/namespaces/${namespace}/configmaps/${objectNames(poolSpirit).bootstrapConfigMap}`);
  const now = (opts.now?.() ?? new Date()).toISOString();
  const status: Obj = {
    bootstrap: { appliedHash: configMap.metadata?.annotations?.[BOOTSTRAP_HASH_ANNOTATION], appliedTime: now },
    etcd: { healthy: true, alarms: [], observedTime: now },
  };
  if (opts.simulateLeader) status.leader = { holder: pod.spec?.nodeName, renewTime: now, transitions: 0 };
  await api.requestJson(HttpMethod.PATCH, `/apis/poolspirit.io/v1alpha1/poolspirits/${poolSpirit}/status`, {
    body: { status },
    contentType: PatchStrategy.MergePatch,
    query: { fieldManager: 'pool-spirit-agent' },
  });
}
