/** Pure security derivations: the RBAC the product's code needs, and checks of RBAC rules. */

export { compatApiUses } from './compat-permissions.ts';
export { collectionOf, FORWARDER_VERBS, forwarderGrants } from './forwarder-permissions.ts';
export type { Grant, PolicyRule, RequestAttributes, Subject, Verb } from './rbac-rules.ts';
export {
  allows,
  compactRules,
  compareGrants,
  dedupe,
  grantKey,
  grantsOf,
  rulesToGrants,
  sortVerbs,
} from './rbac-rules.ts';
export type { ApiUse, FunctionName, PermissionInputs, PermissionUser } from './reconciler-permissions.ts';
export {
  FUNCTIONS,
  functionApiUses,
  groupOf,
  permissionTable,
  reconcilerGrants,
  renderedKinds,
  resourceOf,
  usesToGrants,
} from './reconciler-permissions.ts';

/** The Kubernetes group the functions' IAM roles are mapped to (infra/cluster/reconciler/rbac.yaml binds it). */
export const RECONCILER_GROUP = 'pool-spirit:reconciler';
export { AGENT_ROLE_NAME, agentGroup, agentRbac } from './agent-permissions.ts';
