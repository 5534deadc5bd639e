/**
 * The host cluster, as far as the agent may see it (core/security/agent-permissions.ts, installed by
 * infra/cluster/agent/rbac.yaml): get its bootstrap ConfigMap and patch its PoolSpirit's status. Nothing
 * else: a new call here needs a new verb there.
 */
import { HttpMethod, type KubeConfig, PatchStrategy } from '@kubernetes/client-node';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { statusOf } from '../../adapters/kubernetes/retry.ts';
import { GROUP, PLURAL, VERSION } from '../../core/poolspirit/api.ts';
import { AGENT_FIELD_MANAGER } from './own-apiserver.ts';

export interface ConfigMap {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

export class HostCluster {
  private readonly api: RawObjectApi;

  constructor(kc: KubeConfig) {
    this.api = RawObjectApi.fromKubeConfig(kc);
  }

  async readConfigMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    try {
      return await this.api.requestJson<ConfigMap>(
        HttpMethod.GET,
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`,
      );
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /**
   * A JSON merge patch of the status subresource with only the agent's sections: the reconciler owns the
   * rest of the status and a merge patch leaves what it does not name alone.
   */
  async patchStatus(poolSpirit: string, status: Record<string, unknown>): Promise<void> {
    await this.api.requestJson(
      HttpMethod.PATCH,
      `/apis/${GROUP}/${VERSION}/${PLURAL}/${encodeURIComponent(poolSpirit)}/status`,
      {
        body: { status },
        contentType: PatchStrategy.MergePatch,
        query: { fieldManager: AGENT_FIELD_MANAGER },
      },
    );
  }
}
