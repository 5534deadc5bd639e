/**
 * What a pool-spirit pod runs, read the way a kubelet reads it: the containers' args and env from the pod
 * spec, the mounted Secrets from the host cluster (by the volumes' secretName). Nothing is taken from the
 * renderer's code, so process mode runs what the reconciler actually wrote into the cluster.
 */
import { HttpMethod } from '@kubernetes/client-node';
import type { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { NAME_LABEL } from '../../../../core/render/labels.ts';
import type { PodContainer, PodSpec, SecretData } from './real-control-plane.ts';

export const CONTAINERS = { apiServer: 'kube-apiserver', etcd: 'etcd', agent: 'agent' } as const;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath?: string } };
}

/** The parts of a Pod that process mode reads. */
export interface PoolSpiritPod {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: PodSpec & { containers: Array<PodContainer & { env?: EnvVar[] }> };
}

export function isPoolSpiritPod(pod: {
  metadata?: { labels?: Record<string, string> };
  spec?: { containers?: Array<{ name: string }> };
}): boolean {
  const names = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  return pod.metadata?.labels?.[NAME_LABEL] === 'pool-spirit' && Object.values(CONTAINERS).every((n) => names.has(n));
}

export class PodPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PodPlanError';
  }
}

export const podKeyOf = (pod: PoolSpiritPod) => `${pod.metadata.namespace}/${pod.metadata.name}`;

export function containerOf(pod: PoolSpiritPod, name: string): PodContainer & { env?: EnvVar[] } {
  const found = pod.spec.containers.find((c) => c.name === name);
  if (!found) throw new PodPlanError(`pod ${pod.metadata.name}: no container "${name}"`);
  return found;
}

/** Reads the Secrets the pod mounts from its namespace in the host cluster; a missing one is a PodPlanError naming it. */
export function hostSecrets(host: RawObjectApi, namespace: string): (name: string) => Promise<SecretData> {
  return async (name) => {
    try {
      const secret = await host.requestJson<{ data?: SecretData }>(
        HttpMethod.GET,
        `/api/v1/namespaces/${namespace}/secrets/${name}`,
      );
      return secret.data ?? {};
    } catch (err) {
      if ((err as { code?: number }).code === 404) throw new PodPlanError(`Secret ${namespace}/${name} not found`);
      throw err;
    }
  };
}

/** The container's env as the kubelet resolves it: literal values and the pod's own metadata fields. */
export function containerEnv(pod: PoolSpiritPod, container: { env?: EnvVar[] }): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (typeof e.value === 'string') env[e.name] = e.value;
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.namespace') env[e.name] = pod.metadata.namespace;
    if (field === 'metadata.name') env[e.name] = pod.metadata.name;
  }
  return env;
}
