/**
 * Authentication (x509 client certificates) and authorization (RBAC on the cluster's own Roles and
 * bindings, or AlwaysAllow) for the local Kubernetes API. See AuthGate for the request path and
 * ClusterAuthorization for what tests can read back.
 */
export { AuthGate, DEFAULT_ANONYMOUS_PATHS, type AuthorizationMode, type ClusterAuthorization } from './gate.ts';
export type { Decision, PolicyRule, RequestAttributes, RuleRef, Subject, UserInfo } from './types.ts';
export type { Denial, RuleReport, RuleUsage } from './usage.ts';
export { BOOTSTRAP_CLUSTER_ROLES, BOOTSTRAP_CLUSTER_ROLE_BINDINGS } from './bootstrap-policy.ts';
export {
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
  type CertAndKey,
  type CertificateAuthority,
} from './test-pki.ts';
