/**
 * Authentication and authorization in front of every request, in kube-apiserver's filter order:
 * authenticate (client certificate, else anonymous on the allowed paths, else 401), impersonation, then
 * authorize (system:masters always; then RBAC or AlwaysAllow; else 403 with kube's message).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceRegistry } from '../registry.ts';
import type { ApiError } from '../server/errors.ts';
import type { RouteInfo } from '../server/routes.ts';
import type { ObjectStore, WriteOptions } from '../server/store.ts';
import { AggregationController } from './aggregation-controller.ts';
import { requestAttributes } from './attributes.ts';
import { forbiddenRequest, unauthorized } from './errors.ts';
import { checkRbacWrite, isRbacWrite } from './escalation.ts';
import { impersonatedUser } from './impersonation.ts';
import { authorizeRbac } from './rbac-authorizer.ts';
import { RbacPolicyCache } from './rbac-policy.ts';
import { isReviewRequest, serveReview } from './reviews.ts';
import { seedBootstrapPolicy } from './seed.ts';
import {
  ANONYMOUS,
  AUTHENTICATED_GROUP,
  type Decision,
  MASTERS_GROUP,
  type RequestAttributes,
  type UserInfo,
} from './types.ts';
import { AuthorizationRecorder, type Denial, type RuleReport, type RuleUsage } from './usage.ts';
import { authenticateClientCertificate } from './x509-authenticator.ts';

/** Checks an object about to be stored (create: no `old`); throws the ApiError to send. */
export type WriteAdmission = NonNullable<WriteOptions['admit']>;

export type AuthorizationMode = 'RBAC' | 'AlwaysAllow';

/**
 * Paths anonymous requests may reach by default: the health checks, as kube-apiserver 1.32's structured
 * authentication config allows with `anonymous.conditions` (a kubelet's httpGet probe carries no
 * certificate). Everything else needs a client certificate, as with `--anonymous-auth=false`.
 */
export const DEFAULT_ANONYMOUS_PATHS = ['/healthz', '/livez', '/readyz'];

export interface AuthGateOptions {
  authorization: AuthorizationMode;
  anonymousPaths?: string[];
}

/** What tests and tools can ask the authorizer: decisions, rule usage, denials. */
export interface ClusterAuthorization {
  readonly mode: AuthorizationMode;
  /**
   * Every RBAC rule that allowed at least one request (first allowing rule per request, as kube stops there)
   * or covered a permission granted by a Role, ClusterRole or binding its holder wrote (escalation check).
   */
  usage(): RuleUsage[];
  /** Requests refused with 403 (by authorization or the escalation check), oldest first. */
  denials(): Denial[];
  /** Each rule of a role (effective rules, aggregation included) with its use; empty when the role does not exist. */
  report(role: { kind: 'ClusterRole' | 'Role'; name: string; namespace?: string }): Promise<RuleReport[]>;
  /** Decides for a user without a request (what a SubjectAccessReview would answer). */
  authorize(user: UserInfo, attributes: RequestAttributes): Promise<Decision>;
  /** Forgets recorded usage and denials. */
  reset(): void;
  /** Resolves when the ClusterRole aggregation controller has written every aggregated role. */
  aggregated(): Promise<void>;
}

export class AuthGate implements ClusterAuthorization {
  readonly mode: AuthorizationMode;
  private readonly anonymousPaths: Set<string>;
  private readonly policy?: RbacPolicyCache;
  private readonly aggregation?: AggregationController;
  private readonly recorder = new AuthorizationRecorder();
  private readonly store: ObjectStore;

  constructor(store: ObjectStore, registry: ResourceRegistry, opts: AuthGateOptions) {
    if (opts.authorization !== 'RBAC' && opts.authorization !== 'AlwaysAllow') {
      throw new Error(`authorization: expected 'RBAC' or 'AlwaysAllow', got ${JSON.stringify(opts.authorization)}`);
    }
    this.mode = opts.authorization;
    this.store = store;
    this.anonymousPaths = new Set(opts.anonymousPaths ?? DEFAULT_ANONYMOUS_PATHS);
    if (this.mode === 'RBAC') {
      this.policy = new RbacPolicyCache(store, registry);
      this.aggregation = new AggregationController(store, this.policy);
    }
  }

  /** Seeds the bootstrap policy (RBAC mode) and aggregates the roles before the first request. */
  async start(): Promise<void> {
    if (!this.policy) return;
    await seedBootstrapPolicy(this.store, this.policy);
    this.aggregation!.trigger();
    await this.aggregation!.idle();
  }

  async stop(): Promise<void> {
    await this.aggregation?.stop();
  }

  /** Authenticates and authorizes a request; throws the 401/403 ApiError to send. */
  async admit(req: IncomingMessage, route: RouteInfo, url: URL): Promise<UserInfo> {
    const attributes = requestAttributes(req.method ?? 'GET', url.pathname, route, url.searchParams);
    const certUser = authenticateClientCertificate(req);
    let user: UserInfo;
    if (certUser) {
      user = certUser.groups.includes(AUTHENTICATED_GROUP)
        ? certUser
        : { ...certUser, groups: [...certUser.groups, AUTHENTICATED_GROUP] };
    } else if (this.anonymousPaths.has(url.pathname)) {
      user = ANONYMOUS;
    } else {
      throw unauthorized();
    }
    const authorizeImpersonation = async (actor: UserInfo, a: RequestAttributes) => {
      const d = await this.authorize(actor, a);
      if (d.allowed) this.recorder.recordAllowed(d.by, a);
      return d;
    };
    user = await impersonatedUser(req, user, authorizeImpersonation, (u, a, reason) => this.deny(u, a, reason));
    const decision = await this.authorize(user, attributes);
    if (!decision.allowed) throw this.deny(user, attributes, decision.reason);
    this.recorder.recordAllowed(decision.by, attributes);
    return user;
  }

  /**
   * Authorizes an admitted request once more under another verb, as kube-apiserver does for a server-side
   * apply that creates its object: the patch handler authorizes that as a `create` too (withAuthorization on
   * its createValidation), so apply rights alone never let a client create. Throws the 403.
   */
  async admitAlso(user: UserInfo, req: IncomingMessage, route: RouteInfo, url: URL, verb: string): Promise<void> {
    const attributes = { ...requestAttributes(req.method ?? 'GET', url.pathname, route, url.searchParams), verb };
    const decision = await this.authorize(user, attributes);
    if (!decision.allowed) throw this.deny(user, attributes, decision.reason);
    this.recorder.recordAllowed(decision.by, attributes);
  }

  /**
   * RBAC escalation prevention (escalation.ts) for an admitted create, update or patch of a Role,
   * ClusterRole or binding; undefined when there is nothing to check (AlwaysAllow mode, other resources).
   * kube runs it in the RBAC storage, on the object about to be stored, so the store calls it there.
   */
  rbacWriteAdmission(user: UserInfo, req: IncomingMessage, route: RouteInfo, url: URL): WriteAdmission | undefined {
    const policy = this.policy;
    const request = requestAttributes(req.method ?? 'GET', url.pathname, route, url.searchParams);
    if (!policy || !isRbacWrite(request)) return undefined;
    return async (obj, old) => {
      const outcome = await checkRbacWrite({
        user,
        request,
        obj,
        old,
        policy: await policy.current(),
        authorize: (u, a) => this.authorize(u, a),
      });
      if (!outcome.allowed) {
        if (outcome.error.code === 403) this.recorder.recordDenied(user, request, outcome.error.message);
        throw outcome.error;
      }
      if (outcome.reason === 'authorized') this.recorder.recordAllowed(outcome.decision.by, outcome.attributes);
      if (outcome.reason === 'covered') this.recorder.recordCovered(outcome.covered);
    };
  }

  private deny(user: UserInfo, attributes: RequestAttributes, reason: string): ApiError {
    const err = forbiddenRequest(user, attributes, reason);
    this.recorder.recordDenied(user, attributes, err.message);
    return err;
  }

  /** Serves the self-review APIs; false when the route is something else. */
  async serve(req: IncomingMessage, res: ServerResponse, route: RouteInfo, user: UserInfo): Promise<boolean> {
    if (route.type !== 'resource' || !isReviewRequest(route)) return false;
    await serveReview(req, res, route, user, (u, a) => this.authorize(u, a));
    return true;
  }

  async authorize(user: UserInfo, attributes: RequestAttributes): Promise<Decision> {
    if (user.groups.includes(MASTERS_GROUP)) return { allowed: true, by: 'masters' };
    if (!this.policy) return { allowed: true, by: 'always-allow' };
    return authorizeRbac(await this.policy.current(), user, attributes);
  }

  usage(): RuleUsage[] {
    return this.recorder.usage();
  }

  denials(): Denial[] {
    return this.recorder.denials();
  }

  async report(role: { kind: 'ClusterRole' | 'Role'; name: string; namespace?: string }): Promise<RuleReport[]> {
    if (!this.policy) return [];
    const snapshot = await this.policy.current();
    const rules =
      role.kind === 'ClusterRole'
        ? snapshot.clusterRoleRules(role.name)
        : snapshot.roleRules(role.namespace ?? '', role.name);
    return rules ? this.recorder.report(role, rules) : [];
  }

  reset(): void {
    this.recorder.reset();
  }

  async aggregated(): Promise<void> {
    await this.aggregation?.idle();
  }
}
