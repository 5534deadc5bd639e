/**
 * What the rollout does to one cluster's apiserver: list the PoolSpirits, and server-side apply the
 * patched spec fields under its own field manager `pool-spirit-rollout`. Its own manager (not the
 * reconciler's) is why a rollback can hand the fields back: applying the snapshot values — or leaving a
 * field out that the snapshot did not have — changes only what the rollout itself set, and the
 * reconciler's and operators' fields stay theirs.
 */

import { APPLY_PATCH, apiClientFor, type ClusterTarget } from '../../adapters/kubernetes/api-client.ts';
import { retryPolicy } from '../../adapters/kubernetes/index.ts';
import { API_VERSION, KIND } from '../../core/poolspirit/names.ts';
import type { LivePoolSpirit } from '../../core/rollout/index.ts';

import { ROLLOUT_FIELD_MANAGER } from './field-manager.ts';

export { ROLLOUT_FIELD_MANAGER };

export interface RolloutClusterOps {
  listPoolSpirits(): Promise<LivePoolSpirit[]>;
  /** Server-side apply of exactly these spec fields (force: the rollout is the authority on them). */
  applySpecFields(name: string, specFields: Record<string, unknown>): Promise<LivePoolSpirit>;
  readonly counters: { reads: number; writes: number; retries: number };
}

type PoolSpiritPage = {
  items?: (LivePoolSpirit & { metadata: { deletionTimestamp?: string } })[];
  metadata?: { continue?: string };
};

export function rolloutClusterOps(target: ClusterTarget): RolloutClusterOps {
  const api = apiClientFor(target);
  const counters = { reads: 0, writes: 0, retries: 0 };
  const policy = retryPolicy({}, () => counters.retries++);
  return {
    counters,
    async listPoolSpirits() {
      const items: LivePoolSpirit[] = [];
      let cont: string | undefined;
      do {
        counters.reads++;
        const page = await policy.execute(async ({ signal }) =>
          api.transport.request<PoolSpiritPage>({
            method: 'GET',
            path: await api.path({ apiVersion: API_VERSION, kind: KIND }),
            query: { limit: 500, continue: cont },
            signal,
          }),
        );
        // A PoolSpirit on its way out is not part of the rollout (its NodePool is gone).
        items.push(...(page.items ?? []).filter((i) => !i.metadata.deletionTimestamp));
        cont = page.metadata?.continue || undefined;
      } while (cont);
      return items;
    },
    async applySpecFields(name, specFields) {
      counters.writes++;
      const body = { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: specFields };
      return policy.execute(async ({ signal }) =>
        api.transport.request<LivePoolSpirit>({
          method: 'PATCH',
          path: await api.path({ apiVersion: API_VERSION, kind: KIND, name }),
          query: { fieldManager: ROLLOUT_FIELD_MANAGER, force: true },
          body,
          contentType: APPLY_PATCH,
          signal,
        }),
      );
    },
  };
}
