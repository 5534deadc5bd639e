/**
 * The pool-spirit's own apiserver, reached with the agent's admin kubeconfig: server-side apply of the
 * bootstrap manifests and reads of what the agent reports on.
 */
import { HttpMethod, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { statusOf } from '../../adapters/kubernetes/retry.ts';
import type { KubeObject } from '../../core/kube.ts';
import type { LeaseLike } from '../decide/leader.ts';

/** A stored object as read back: the bootstrap step looks at a CRD's conditions, nothing else. */
export type StoredObject = KubernetesObject & { status?: { conditions?: Array<{ type?: string; status?: string }> } };

export const AGENT_FIELD_MANAGER = 'pool-spirit-agent';

export class OwnApiserver {
  private readonly api: RawObjectApi;

  constructor(kc: KubeConfig) {
    this.api = RawObjectApi.fromKubeConfig(kc);
  }

  /** Server-side apply, forced: the bootstrap content is the one authority on the fields it sets. */
  async apply(obj: KubeObject): Promise<void> {
    await this.api.applyJson(stripServerFields(obj) as KubernetesObject, AGENT_FIELD_MANAGER, true);
  }

  /** The object as stored, or undefined when it does not exist. */
  async read(obj: KubeObject): Promise<StoredObject | undefined> {
    try {
      const ref = {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace },
      };
      return await this.api.read<StoredObject>(ref);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async readLease(namespace: string, name: string): Promise<LeaseLike | undefined> {
    try {
      return await this.api.requestJson<LeaseLike>(
        HttpMethod.GET,
        `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases/${encodeURIComponent(name)}`,
      );
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }
}

/** An apply body must not carry server-owned metadata (a copy-pasted manifest sometimes does). */
function stripServerFields(obj: KubeObject): KubeObject {
  const {
    resourceVersion: _rv,
    uid: _uid,
    creationTimestamp: _ct,
    managedFields: _mf,
    generation: _g,
    ...metadata
  } = obj.metadata;
  const { status: _status, ...rest } = obj as KubeObject & { status?: unknown };
  return { ...rest, metadata } as KubeObject;
}
