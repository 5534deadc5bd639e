/**
 * Authentication (x509 client certificates) and authorization (RBAC on the cluster's own Roles and
 * bindings, or AlwaysAllow) for the local Kubernetes API. See AuthGate for the request path and
 * ClusterAuthorization for what tests can read back.
 */

export {
  type CertAndKey,
  type CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
} from '../../pki.ts';
export { BOOTSTRAP_CLUSTER_ROLE_BINDINGS, BOOTSTRAP_CLUSTER_ROLES } from './bootstrap-policy.ts';
export { AuthGate, type AuthorizationMode, type ClusterAuthorization, DEFAULT_ANONYMOUS_PATHS } from './gate.ts';
export type { Decision, PolicyRule, RequestAttributes, RuleRef, Subject, UserInfo } from './types.ts';
export type { Denial, RuleReport, RuleUsage } from './usage.ts';
