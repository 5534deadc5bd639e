/**
 * What the authorizer decided, kept so a test can prove a role is the least privilege: every rule (and
 * every verb × resource a rule grants) was needed by some request, and no request was denied.
 * A request counts for the first rule that allowed it, the one kube's RBAC authorizer stops at. RBAC
 * escalation prevention uses rules too: a Role, ClusterRole or binding may only grant what its writer
 * holds, so each permission it grants counts for the first rule of the writer that covered it (where
 * kube's Covers stops looking), as `escalationChecks` and in `permissions`.
 */
import type { PolicyRule, RequestAttributes, RuleRef, UserInfo } from './types.ts';

export interface RuleUsage extends RuleRef {
  /** Requests this rule allowed. */
  allowed: number;
  /** RBAC writes whose escalation check this rule helped pass (it covered some permission they grant). */
  escalationChecks: number;
  /** Distinct permissions exercised through the rule (requested, or granted onward), spelled as permissionKey does. */
  permissions: string[];
}

export interface Denial {
  at: number;
  user: string;
  groups: string[];
  attributes: RequestAttributes;
  /** The Status message the client got. */
  message: string;
}

/** A rule of a role with how often it was used; `unusedPermissions` lists the verb × resource pairs it grants that no request needed. */
export interface RuleReport extends RuleRef {
  rule: PolicyRule;
  allowed: number;
  escalationChecks: number;
  permissions: string[];
  unusedPermissions: string[];
}

const MAX_DENIALS = 10_000;

/** `verb resource[.group][/subresource]` (`list pods`, `patch deployments.apps/scale`) or `verb /path`. */
function spell(verb: string, group: string, resource: string): string {
  const slash = resource.indexOf('/');
  const base = slash < 0 ? resource : resource.slice(0, slash);
  const sub = slash < 0 ? '' : resource.slice(slash);
  return `${verb} ${base}${group ? `.${group}` : ''}${sub}`;
}

export function permissionKey(a: RequestAttributes): string {
  if (!a.resourceRequest) return `${a.verb} ${a.path}`;
  return spell(a.verb, a.apiGroup, a.subresource ? `${a.resource}/${a.subresource}` : a.resource);
}

/** The permissions a rule grants, spelled like permissionKey; wildcards stay as `*`. */
export function grantedPermissions(rule: PolicyRule): string[] {
  const out: string[] = [];
  for (const verb of rule.verbs) {
    for (const url of rule.nonResourceURLs ?? []) out.push(`${verb} ${url}`);
    for (const group of rule.apiGroups ?? [])
      for (const resource of rule.resources ?? []) out.push(spell(verb, group, resource));
  }
  return out;
}

function roleKey(r: { kind: string; namespace?: string; name: string }): string {
  return `${r.kind}/${r.namespace ?? ''}/${r.name}`;
}

interface UsageEntry {
  ref: RuleRef;
  allowed: number;
  escalationChecks: number;
  permissions: Set<string>;
}

export class AuthorizationRecorder {
  private readonly used = new Map<string, UsageEntry>();
  private denied: Denial[] = [];
  private mastersAllowed = 0;

  recordAllowed(by: RuleRef | 'masters' | 'always-allow', a: RequestAttributes): void {
    if (by === 'masters') {
      this.mastersAllowed++;
      return;
    }
    if (by === 'always-allow') return;
    const entry = this.entry(by);
    entry.allowed++;
    entry.permissions.add(permissionKey(a));
  }

  /** One passed escalation check: each permission granted, with the writer's rule that covered it. */
  recordCovered(covered: Array<{ by: RuleRef; permission: string }>): void {
    const rules = new Set<UsageEntry>();
    for (const c of covered) {
      const entry = this.entry(c.by);
      entry.permissions.add(c.permission);
      rules.add(entry);
    }
    for (const entry of rules) entry.escalationChecks++;
  }

  private entry(by: RuleRef): UsageEntry {
    const key = `${roleKey(by)}#${by.ruleIndex}`;
    let entry = this.used.get(key);
    if (!entry) {
      entry = { ref: { ...by }, allowed: 0, escalationChecks: 0, permissions: new Set() };
      this.used.set(key, entry);
    }
    return entry;
  }

  recordDenied(user: UserInfo, a: RequestAttributes, message: string): void {
    if (this.denied.length >= MAX_DENIALS) this.denied.shift();
    this.denied.push({ at: Date.now(), user: user.name, groups: [...user.groups], attributes: { ...a }, message });
  }

  /** Every rule that allowed at least one request or covered a permission in an escalation check, by role then rule index. */
  usage(): RuleUsage[] {
    return [...this.used.values()]
      .map((e) => ({
        ...e.ref,
        allowed: e.allowed,
        escalationChecks: e.escalationChecks,
        permissions: [...e.permissions].sort(),
      }))
      .sort((x, y) => roleKey(x).localeCompare(roleKey(y)) || x.ruleIndex - y.ruleIndex);
  }

  /** Every request refused with 403, oldest first (the last 10,000). */
  denials(): Denial[] {
    return this.denied.map((d) => ({ ...d, groups: [...d.groups], attributes: { ...d.attributes } }));
  }

  /** Requests allowed only because the user is in system:masters. */
  mastersRequests(): number {
    return this.mastersAllowed;
  }

  /** Per rule of the given role (its effective rules, aggregation included), how it was used. */
  report(role: { kind: 'ClusterRole' | 'Role'; namespace?: string; name: string }, rules: PolicyRule[]): RuleReport[] {
    return rules.map((rule, ruleIndex) => {
      const ref: RuleRef = {
        kind: role.kind,
        name: role.name,
        ruleIndex,
        ...(role.kind === 'Role' ? { namespace: role.namespace } : {}),
      };
      const e = this.used.get(`${roleKey(ref)}#${ruleIndex}`);
      const permissions = e ? [...e.permissions].sort() : [];
      const seen = new Set(permissions);
      return {
        ...ref,
        rule,
        allowed: e?.allowed ?? 0,
        escalationChecks: e?.escalationChecks ?? 0,
        permissions,
        unusedPermissions: grantedPermissions(rule).filter((p) => !p.includes('*') && !seen.has(p)),
      };
    });
  }

  reset(): void {
    this.used.clear();
    this.denied = [];
    this.mastersAllowed = 0;
  }
}
