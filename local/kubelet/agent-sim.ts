import { AppsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
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
  const deployment: Obj = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: deploymentName, namespace });
  const poolSpirit = (deployment.metadata?.ownerReferences ?? []).find((o: Obj) => o.kind === 'PoolSpirit')?.name;
  if (!poolSpirit) return;
  const configMap: Obj = await kc
    .makeApiClient(CoreV1Api)
    .readNamespacedConfigMap({ name: objectNames(poolSpirit).bootstrapConfigMap, namespace });
  const now = (opts.now?.() ?? new Date()).toISOString();
  const status: Obj = {
    bootstrap: { appliedHash: configMap.metadata?.annotations?.[BOOTSTRAP_HASH_ANNOTATION], appliedTime: now },
    etcd: { healthy: true, alarms: [], observedTime: now },
  };
  if (opts.simulateLeader) status.leader = { holder: pod.spec?.nodeName, renewTime: now, transitions: 0 };
  await kc.makeApiClient(CustomObjectsApi).patchClusterCustomObjectStatus(
    { group: 'poolspirit.io', version: 'v1alpha1', plural: 'poolspirits', name: poolSpirit, body: { status }, fieldManager: 'pool-spirit-agent' },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
