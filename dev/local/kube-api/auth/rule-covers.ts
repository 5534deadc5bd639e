/**
 * Whether a set of rules covers another, as RBAC escalation prevention decides it
 * (k8s.io/kubernetes pkg/registry/rbac/validation/policy_comparator.go: Covers, BreakdownRule, ruleCovers).
 * Each rule to grant is broken into atomic parts — one verb × group × resource × resourceName, or one
 * verb × nonResourceURL — and each part must be covered by a single owner rule on its own.
 */
import type { PolicyRule } from './types.ts';

const ALL = '*';

/** One verb, one group, one resource, at most one resourceName; or one verb and one nonResourceURL. */
export type AtomicRule =
  | { verbs: [string]; apiGroups: [string]; resources: [string]; resourceNames?: [string] }
  | { verbs: [string]; nonResourceURLs: [string] };

/** kube's BreakdownRule, in its order: groups, then resources, then verbs, then names; URLs after. */
export function breakdownRule(rule: PolicyRule): AtomicRule[] {
  const out: AtomicRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        for (const name of names)
          out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs ?? []) out.push({ verbs: [verb], nonResourceURLs: [url] });
  }
  return out;
}

function has(set: string[] | undefined, element: string): boolean {
  return (set ?? []).includes(element);
}

function hasAll(set: string[] | undefined, wanted: string[]): boolean {
  return wanted.every((w) => has(set, w));
}

/** `*`, the exact resource, or — for `resource/subresource` — the owner's `*\/subresource`. */
function resourceCoversAll(owner: string[] | undefined, wanted: string[]): boolean {
  if (has(owner, ALL) || hasAll(owner, wanted)) return true;
  return wanted.every((path) => {
    if (has(owner, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(owner, `*/${path.slice(slash + 1)}`);
  });
}

/** Exact, or an owner path ending in `*` whose prefix (all trailing `*` trimmed, as strings.TrimRight) starts the path. */
function nonResourceUrlCovers(owner: string, path: string): boolean {
  return owner === path || (owner.endsWith(ALL) && path.startsWith(owner.replace(/\*+$/, '')));
}

/** kube's ruleCovers: the owner rule (any shape) covers the atomic rule. */
export function ruleCovers(owner: PolicyRule, sub: AtomicRule): boolean {
  const subGroups = 'apiGroups' in sub ? sub.apiGroups : [];
  const subResources = 'resources' in sub ? sub.resources : [];
  const subNames = 'resourceNames' in sub ? (sub.resourceNames ?? []) : [];
  const subUrls = 'nonResourceURLs' in sub ? sub.nonResourceURLs : [];
  const ownerNames = owner.resourceNames ?? [];
  return (
    (has(owner.verbs, ALL) || hasAll(owner.verbs, sub.verbs)) &&
    (has(owner.apiGroups, ALL) || hasAll(owner.apiGroups, subGroups)) &&
    resourceCoversAll(owner.resources, subResources) &&
    subUrls.every((path) => (owner.nonResourceURLs ?? []).some((o) => nonResourceUrlCovers(o, path))) &&
    (ownerNames.length === 0 || (subNames.length > 0 && hasAll(ownerNames, subNames)))
  );
}

export interface Coverage {
  /** Every atomic part to grant, with the index of the first owner rule covering it (-1: none). */
  parts: Array<{ part: AtomicRule; owner: number }>;
  /** The parts no owner rule covers, in breakdown order (kube's missing rights). */
  missing: AtomicRule[];
}

/** kube's Covers, also telling which owner rule covered each part (the first one, where kube stops looking). */
export function covers(ownerRules: PolicyRule[], rules: PolicyRule[]): Coverage {
  const parts = rules
    .flatMap(breakdownRule)
    .map((part) => ({ part, owner: ownerRules.findIndex((o) => ruleCovers(o, part)) }));
  return { parts, missing: parts.filter((p) => p.owner < 0).map((p) => p.part) };
}
