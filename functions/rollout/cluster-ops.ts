/**
 * What the rollout does to one cluster's apiserver: list the PoolSpirits, and server-side apply the
 * patched spec fields under its own field manager `pool-spirit-rollout`. Its own manager (not the
 * reconciler's) is why a rollback can hand the fields back: applying the snapshot values — or leaving a
 * field out that the snapshot did not have — changes only what the rollout itself set, and the
 * reconciler's and operators' fields stay theirs.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from '../../core/poolspirit/api.ts';
import type { LivePoolSpirit } from '../../core/rollout/index.ts';
import { retryPolicy } from '../../adapters/kubernetes/index.ts';

export const ROLLOUT_FIELD_MANAGER = 'pool-spirit-rollout';

export interface RolloutClusterOps {
  listPoolSpirits(): Promise<LivePoolSpirit[]>;
  /** Server-side apply of exactly these spec fields (force: the rollout is the authority on them). */
  applySpecFields(name: string, specFields: Record<string, unknown>): Promise<LivePoolSpirit>;
  readonly counters: { reads: number; writes: number; retries: number };
}

const clients = new WeakMap<KubeConfig, CustomObjectsApi>();

export function rolloutClusterOps(kc: KubeConfig): RolloutClusterOps {
  let api = clients.get(kc);
  if (!api) clients.set(kc, (api = kc.makeApiClient(CustomObjectsApi)));
  const custom = api;
  const counters = { reads: 0, writes: 0, retries: 0 };
  const policy = retryPolicy({}, () => counters.retries++);
  const plain = <T>(v: unknown) => JSON.parse(JSON.stringify(v)) as T;
  return {
    counters,
    async listPoolSpirits() {
      const items: LivePoolSpirit[] = [];
      let cont: string | undefined;
      do {
        counters.reads++;
        const page = plain<{ items: (LivePoolSpirit & { metadata: { deletionTimestamp?: string } })[]; metadata?: { continue?: string } }>(
          await policy.execute(() => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, limit: 500, _continue: cont })),
        );
        // A PoolSpirit on its way out is not part of the rollout (its NodePool is gone).
        items.push(...page.items.filter((i) => !i.metadata.deletionTimestamp));
        cont = page.metadata?.continue || undefined;
      } while (cont);
      return items;
    },
    async applySpecFields(name, specFields) {
      counters.writes++;
      const body = { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: specFields };
      const out = await policy.execute(() =>
        custom.patchClusterCustomObject(
          { group: GROUP, version: VERSION, plural: PLURAL, name, body, fieldManager: ROLLOUT_FIELD_MANAGER, force: true },
          setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
        ),
      );
      return plain<LivePoolSpirit>(out);
    },
  };
}
