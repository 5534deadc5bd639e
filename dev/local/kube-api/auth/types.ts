/** Who made a request and what it asks for: the inputs of authentication and authorization, as in k8s.io/apiserver. */

export interface UserInfo {
  name: string;
  groups: string[];
}

export const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** Members bypass authorization entirely (kube-apiserver's privileged-group authorizer). */
export const MASTERS_GROUP = 'system:masters';

/** kube's authorizer.Attributes: a resource request, or a non-resource URL (discovery, health, OpenAPI). */
export type RequestAttributes =
  | {
      resourceRequest: true;
      verb: string;
      apiGroup: string;
      apiVersion: string;
      /** '' for cluster-scoped requests; the namespace's own name for /api/v1/namespaces/<ns>. */
      namespace: string;
      resource: string;
      subresource: string;
      /** '' when the request names no object (list, create, deletecollection). */
      name: string;
    }
  | { resourceRequest: false; verb: string; path: string };

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}

/** A ClusterRole's aggregationRule (its selectors are metav1.LabelSelectors). */
export interface AggregationRule {
  clusterRoleSelectors?: unknown[];
}

/** The rule that allowed a request: the role (kind, namespace for Roles, name) and the rule's index in it. */
export interface RuleRef {
  kind: 'ClusterRole' | 'Role';
  namespace?: string;
  name: string;
  ruleIndex: number;
}

export type Decision =
  | { allowed: true; by: 'masters' | 'always-allow' | RuleRef; binding?: string }
  | { allowed: false; reason: string };
