/**
 * What kube-apiserver decided about the reconciler's requests, read from its audit log: the requests it
 * refused, the use of each rule of the reconciler's roles (rule-usage.ts), and any write to RBAC objects.
 * The roles' rules are read from the cluster when asked, so a test that changes a role sees its change.
 */
import type { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { WRITE_VERBS } from '../../../../dev/local/kube-api/server/request-log.ts';
import type { AuditRecord, AuditRequestLog } from '../../../../dev/local/real-cluster/audit-log.ts';
import { type PolicyRule, type RoleRef, type RoleRules, type RuleReport, reportOf, ruleUsage } from './rule-usage.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface Denial {
  verb: string;
  /** `resource` or `resource/subresource`. */
  resource: string;
  group: string;
  namespace?: string;
  name?: string;
  /** The Status message the client got, e.g. `pods is forbidden: User "u" cannot list resource "pods" ...`. */
  message: string;
}

export class RbacJudge {
  private from = 0;
  private readonly log: AuditRequestLog;
  private readonly admin: RawObjectApi;
  private readonly roles: RoleRef[];

  /** `log` keeps the reconciler's requests only; `roles` are the roles bound to it (reconcilerRoles). */
  constructor(log: AuditRequestLog, admin: RawObjectApi, roles: RoleRef[]) {
    this.log = log;
    this.admin = admin;
    this.roles = roles;
  }

  /** Forgets what was requested so far: later answers cover only what comes after. */
  async reset(): Promise<void> {
    this.from = await this.log.mark();
  }

  /**
   * The reconciler's requests since the last reset, every one finished before the call included. Dry runs
   * are left out: the functions send none, and a test's probes of admission as the reconciler are not
   * requests the functions needed.
   */
  async requests(): Promise<AuditRecord[]> {
    return (await this.log.since(this.from)).filter((r) => !r.dryRun);
  }

  /** Requests refused with 403: by the authorizer, or after it (an apply whose create was not allowed). */
  async denials(): Promise<Denial[]> {
    return (await this.requests())
      .filter((r) => r.status === 403)
      .map((r) => ({
        verb: r.verb,
        resource: r.subresource ? `${r.resource}/${r.subresource}` : (r.resource ?? ''),
        group: r.group ?? '',
        namespace: r.namespace,
        name: r.name,
        message: r.message ?? '',
      }));
  }

  /** Writes the reconciler sent to Roles, ClusterRoles or their bindings, refused ones included. */
  async rbacWrites(): Promise<AuditRecord[]> {
    return (await this.requests()).filter((r) => r.group === RBAC_GROUP && WRITE_VERBS.has(r.verb));
  }

  /** Each rule of `role` as the cluster holds it now, with its use; empty when the role does not exist. */
  async report(role: RoleRef): Promise<RuleReport[]> {
    const key = (r: RoleRef) => `${r.kind}/${r.namespace ?? ''}/${r.name}`;
    const refs = this.roles.some((r) => key(r) === key(role)) ? this.roles : [...this.roles, role];
    const live = (await Promise.all(refs.map((r) => this.read(r)))).filter((r) => r !== undefined);
    return reportOf(ruleUsage(live, await this.requests()), role);
  }

  private async read(role: RoleRef): Promise<RoleRules | undefined> {
    try {
      const obj = (await this.admin.read({
        apiVersion: `${RBAC_GROUP}/v1`,
        kind: role.kind,
        metadata: { name: role.name, namespace: role.namespace },
      })) as { rules?: PolicyRule[] };
      // kube answers with Go's field order (verbs first); a rule is shown in the manifests' order instead.
      const rules = (obj.rules ?? []).map(({ apiGroups, resources, resourceNames, nonResourceURLs, verbs }) => ({
        ...(apiGroups && { apiGroups }),
        ...(resources && { resources }),
        ...(resourceNames && { resourceNames }),
        ...(nonResourceURLs && { nonResourceURLs }),
        verbs,
      }));
      return { ...role, rules };
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }
}
