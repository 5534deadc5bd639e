/**
 * The RBAC objects stored in the cluster itself, read through the ObjectStore into an immutable snapshot.
 * Every committed write of a Role, ClusterRole or binding marks the snapshot stale (the store's commit
 * hooks run before the write's response is sent), so the next authorization reads the new policy: a
 * client that creates a binding and then uses it is never refused because of a cache delay.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceInfo, ResourceRegistry } from '../registry.ts';
import { labelSelectorFromMeta, matchLabels } from '../selectors.ts';
import type { ApiObject } from '../server/objects.ts';
import type { ObjectStore } from '../server/store.ts';
import type { AggregationRule, PolicyRule, RoleRef, Subject } from './types.ts';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const RBAC_RESOURCES = ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'] as const;

export interface Binding {
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  namespace: string;
  name: string;
  subjects: Subject[];
  roleRef: RoleRef;
}

export class RbacSnapshot {
  readonly clusterRoles: Map<string, ApiObject>;
  readonly roles: Map<string, ApiObject>;
  readonly clusterRoleBindings: Binding[];
  readonly roleBindings: Map<string, Binding[]>;
  private readonly effective = new Map<string, PolicyRule[]>();

  constructor(
    clusterRoles: ApiObject[],
    roles: ApiObject[],
    clusterRoleBindings: ApiObject[],
    roleBindings: ApiObject[],
  ) {
    this.clusterRoles = new Map(clusterRoles.map((r) => [r.metadata.name, r]));
    this.roles = new Map(roles.map((r) => [`${r.metadata.namespace}/${r.metadata.name}`, r]));
    this.clusterRoleBindings = clusterRoleBindings.map((b) => toBinding('ClusterRoleBinding', b));
    this.roleBindings = new Map();
    for (const b of roleBindings) {
      // A RoleBinding is namespaced (and only looked up by a non-empty namespace).
      const namespace = b.metadata.namespace ?? '';
      const list = this.roleBindings.get(namespace) ?? [];
      list.push(toBinding('RoleBinding', b));
      this.roleBindings.set(namespace, list);
    }
  }

  /** A Role's rules, or undefined when it does not exist. */
  roleRules(namespace: string, name: string): PolicyRule[] | undefined {
    const rules = this.roles.get(`${namespace}/${name}`)?.rules as PolicyRule[] | undefined;
    return rules ?? (this.roles.has(`${namespace}/${name}`) ? [] : undefined);
  }

  /**
   * A ClusterRole's rules; for one with an aggregationRule, the union of the rules of the ClusterRoles its
   * selectors match, computed here rather than waiting for the aggregation controller to write them.
   */
  clusterRoleRules(name: string, visiting: Set<string> = new Set()): PolicyRule[] | undefined {
    const cached = this.effective.get(name);
    if (cached) return cached;
    const role = this.clusterRoles.get(name);
    if (!role) return undefined;
    if (!role.aggregationRule) return (role.rules ?? []) as PolicyRule[];
    if (visiting.has(name)) return (role.rules ?? []) as PolicyRule[];
    visiting.add(name);
    const rules = aggregateRules(this.aggregatedSources(role), (n) => this.clusterRoleRules(n, visiting) ?? []);
    visiting.delete(name);
    this.effective.set(name, rules);
    return rules;
  }

  /** Names of the ClusterRoles an aggregating ClusterRole selects, sorted as the controller visits them. */
  aggregatedSources(role: ApiObject): string[] {
    const aggregationRule = role.aggregationRule as AggregationRule | undefined;
    const selectors = (aggregationRule?.clusterRoleSelectors ?? []).map((s) => labelSelectorFromMeta(s as never));
    const names = new Set<string>();
    for (const selector of selectors) {
      if (!selector) continue;
      for (const [n, other] of this.clusterRoles) {
        if (n !== role.metadata.name && matchLabels(selector, other.metadata.labels)) names.add(n);
      }
    }
    return [...names].sort();
  }
}

/** kube's aggregation: the selected roles' rules in name order, each distinct rule once. */
export function aggregateRules(sources: string[], rulesOf: (name: string) => PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const source of sources) {
    for (const rule of rulesOf(source)) if (!out.some((r) => isDeepStrictEqual(r, rule))) out.push(rule);
  }
  return out;
}

function toBinding(kind: Binding['kind'], obj: ApiObject): Binding {
  return {
    kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name,
    subjects: (obj.subjects ?? []) as Subject[],
    roleRef: obj.roleRef as RoleRef,
  };
}

export class RbacPolicyCache {
  private readonly store: ObjectStore;
  private readonly registry: ResourceRegistry;
  private version = 0;
  private snapshotVersion = -1;
  private snapshot?: RbacSnapshot;
  private loading?: { version: number; promise: Promise<RbacSnapshot> };
  private readonly listeners: Array<(resource: string) => void> = [];

  constructor(store: ObjectStore, registry: ResourceRegistry) {
    this.store = store;
    this.registry = registry;
    // The store has one commit hook per resource; nothing else hooks the RBAC resources.
    for (const resource of RBAC_RESOURCES) {
      store.afterCommit.set(`${RBAC_GROUP}/${resource}`, async (): Promise<undefined> => {
        this.version++;
        for (const l of this.listeners) l(resource);
      });
    }
  }

  /** Called after every committed RBAC write (after the snapshot was marked stale). */
  onChange(listener: (resource: string) => void): void {
    this.listeners.push(listener);
  }

  info(resource: (typeof RBAC_RESOURCES)[number]): ResourceInfo {
    return this.registry.get(RBAC_GROUP, 'v1', resource)!;
  }

  /** The current policy; reloads when an RBAC write committed since the last load (also during it). */
  async current(): Promise<RbacSnapshot> {
    for (;;) {
      if (this.snapshot && this.snapshotVersion === this.version) return this.snapshot;
      const version = this.version;
      if (!this.loading || this.loading.version !== version) this.loading = { version, promise: this.load() };
      const snapshot = await this.loading.promise;
      if (this.version === version) {
        this.snapshot = snapshot;
        this.snapshotVersion = version;
        return snapshot;
      }
    }
  }

  private async load(): Promise<RbacSnapshot> {
    const list = async (resource: (typeof RBAC_RESOURCES)[number]) =>
      (await this.store.listAll(this.info(resource))).items;
    const [clusterRoles, roles, clusterRoleBindings, roleBindings] = await Promise.all([
      list('clusterroles'),
      list('roles'),
      list('clusterrolebindings'),
      list('rolebindings'),
    ]);
    return new RbacSnapshot(clusterRoles, roles, clusterRoleBindings, roleBindings);
  }
}
