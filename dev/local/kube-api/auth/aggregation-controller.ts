/**
 * kube-controller-manager's clusterrole-aggregation controller: writes the union of the selected
 * ClusterRoles' rules into every ClusterRole with an aggregationRule, so `kubectl get clusterrole view`
 * shows its rules. Authorization does not wait for it (RbacSnapshot aggregates on read); this only makes
 * the stored objects say the same.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../server/errors.ts';
import type { ObjectStore } from '../server/store.ts';
import type { RbacPolicyCache } from './rbac-policy.ts';

const MANAGER = 'clusterrole-aggregation-controller';

export class AggregationController {
  private readonly store: ObjectStore;
  private readonly policy: RbacPolicyCache;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(store: ObjectStore, policy: RbacPolicyCache) {
    this.store = store;
    this.policy = policy;
    policy.onChange((resource) => {
      if (resource === 'clusterroles') this.trigger();
    });
  }

  /** Runs a pass now, or once more after the one in progress. */
  trigger(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => (this.running = undefined));
  }

  /** Resolves when no pass is running or pending (for tests and start-up). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.pass();
      } catch (err) {
        if (!this.stopped) console.error('local kube-api: clusterrole aggregation:', err);
      }
    } while (this.again && !this.stopped);
  }

  private async pass(): Promise<void> {
    const snapshot = await this.policy.current();
    for (const [name, role] of snapshot.clusterRoles) {
      if (this.stopped) return;
      if (!role.aggregationRule) continue;
      const rules = snapshot.clusterRoleRules(name) ?? [];
      if (isDeepStrictEqual(role.rules ?? [], rules)) continue;
      await this.store
        .update(
          this.policy.info('clusterroles'),
          undefined,
          name,
          undefined,
          { fieldManager: MANAGER, fieldValidation: 'Ignore' },
          (current) => ({ ...current, rules }),
        )
        .catch((err) => {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        });
    }
  }
}
