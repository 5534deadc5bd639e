/**
 * What each function's code calls on AWS, as IAM actions: the table the per-function roles in
 * serverless.yml are written from. Tests hold both sides to it: each role in the packaged CloudFormation
 * grants exactly its row (test/scripts/package.e2e.test.ts), and each handler's bundle (esbuild, tree-shaken)
 * references exactly the SDK commands its row allows (test/functions/common/permissions.test.ts), so a new
 * call without a permission (or a permission left behind after its call is gone) fails the suite.
 *
 * Not here because no IAM permission is involved:
 *  - EKS tokens (adapters/cluster-access/eks-token.ts) are presigned STS GetCallerIdentity URLs, which any
 *    identity may call; the cluster decides access from its access entry / aws-auth mapping of the role.
 *  - Metrics go out as CloudWatch embedded-metric-format log lines (Powertools Metrics), not PutMetricData.
 *  - Every role in serverless.yml also gets what the platform does on the function's behalf, not its
 *    code: logs:CreateLogStream and logs:PutLogEvents on its own log group, and sqs:SendMessage on its own
 *    dead-letter queue (Lambda's on-failure destination for events the function failed on). The code uses
 *    that same grant for the dead letters it records itself (input that can never succeed,
 *    functions/common/sqs-dead-letters.ts): a SigV4-signed request, not an SDK command, so the bundle
 *    check does not see it; the grant is there for every function either way.
 */

import { auditRequestRouting } from '../../events/audit-request.ts';
import { leaderProbeRequestRouting } from '../../events/leader-probe-request.ts';
import { reconcileRequestRouting } from '../../events/reconcile-request.ts';

/** Where an event is routed: its source and detail-type. */
interface EventRouting {
  readonly source: string;
  readonly detailType: string;
}

export type FunctionName = 'reconcile' | 'audit' | 'cloudEvents' | 'rollout' | 'probe';

export type DynamoDbAction =
  | 'GetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'Query'
  | 'Scan'
  | 'BatchGetItem'
  | 'BatchWriteItem'
  | 'ConditionCheckItem';
export type EventsAction = 'PutEvents';
export type SecretsManagerAction = 'GetSecretValue';

export interface FunctionPermissions {
  /** On the state table itself: no function queries an index, so no index ARN is granted. */
  dynamodb: readonly DynamoDbAction[];
  /** On the stack's event bus. */
  events: readonly EventsAction[];
  /**
   * The only events its PutEvents may put (each is one of these routings): the policy's `events:source` and
   * `events:detail-type` conditions, which EventBridge checks entry by entry. Every function that sends
   * events has one: a stolen role can only ask for the work its function asks for.
   */
  eventsPut?: readonly EventRouting[];
  /**
   * On secrets named `pool-spirit/<stage>/*` in the stack's region; granted only when the stage's
   * `clusterAccess` parameter is `secret` (with `eks` no registered cluster is reached through a secret).
   */
  secretsmanager: readonly SecretsManagerAction[];
}

export const FUNCTION_PERMISSIONS: Readonly<Record<FunctionName, FunctionPermissions>> = {
  reconcile: {
    // BatchGetItem: the pool's state item and the registry entry in one round trip at the start of an
    // invocation (reconcile-state.ts readInvocationStart). GetItem: the lease while waiting for it and the
    // pool's state record (state-table/lease.ts, reconcile-state.ts). UpdateItem: conditional lease
    // acquire/renew/release and the state/outcome writes (lease.ts, reconcile-state.ts). No Query: one
    // pool per invocation.
    dynamodb: ['GetItem', 'BatchGetItem', 'UpdateItem'],
    events: [],
    // The cluster's kubeconfig when it is registered as `secret` (cluster-access/secrets.ts).
    secretsmanager: ['GetSecretValue'],
  },
  audit: {
    // GetItem: registry entry (registry.ts). Query: the registry listing for the fan-out (registry.ts), a
    // cluster's probe records (probe-records.ts) and previous audits (audit-records.ts). BatchGetItem: the
    // full records that notes of unchanged runs name, when the Query did not return them (audit-records.ts;
    // a read of the same items Query reaches). PutItem: the audit record (audit-records.ts). UpdateItem: the
    // OpenYurt versions found, on an existing registration (registry.ts recordOpenYurt); it grants no item
    // PutItem could not already replace.
    dynamodb: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'Query'],
    // One Cluster Audit Request per registered cluster from the scheduled fan-out, and a Reconcile Request
    // for each pool with a fixable finding (common/send-events.ts through eventbridge/put-events.ts).
    events: ['PutEvents'],
    eventsPut: [auditRequestRouting, reconcileRequestRouting],
    secretsmanager: ['GetSecretValue'],
  },
  cloudEvents: {
    // GetItem and Query: the registry only (registry.ts), to find which cluster owns the instance. It
    // writes nothing to the table.
    dynamodb: ['GetItem', 'Query'],
    // A Reconcile Request for each pool whose pool-spirit it moved (functions/cloud-events/handler.ts through
    // common/send-events.ts and eventbridge/put-events.ts).
    events: ['PutEvents'],
    eventsPut: [reconcileRequestRouting],
    secretsmanager: ['GetSecretValue'],
  },
  rollout: {
    // GetItem, PutItem, UpdateItem, Query: rollout records, created, stepped under a version condition and
    // listed (state-table/rollout-state.ts); the registry (registry.ts).
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'Query'],
    events: [],
    secretsmanager: ['GetSecretValue'],
  },
  probe: {
    // GetItem and Query: the registry (registry.ts) and earlier observations (probe-records.ts); PutItem:
    // each new observation (probe-records.ts).
    dynamodb: ['GetItem', 'PutItem', 'Query'],
    // One Leader Probe Request per registered cluster from the scheduled fan-out (probe/fan-out.ts through
    // common/send-events.ts and eventbridge/put-events.ts), so each cluster is probed in its own invocation.
    // Only that event: a stolen role can ask for probes, not reconciles or audits (docs/security.md).
    events: ['PutEvents'],
    eventsPut: [leaderProbeRequestRouting],
    secretsmanager: ['GetSecretValue'],
  },
};

/** Each permission as the IAM action string a policy statement carries (`dynamodb:GetItem`, ...). */
export function iamActions(permissions: FunctionPermissions): {
  dynamodb: string[];
  events: string[];
  secretsmanager: string[];
} {
  return {
    dynamodb: permissions.dynamodb.map((a) => `dynamodb:${a}`),
    events: permissions.events.map((a) => `events:${a}`),
    secretsmanager: permissions.secretsmanager.map((a) => `secretsmanager:${a}`),
  };
}

/**
 * The policy condition that holds PutEvents to `eventsPut`, as the role's statement in serverless.yml carries
 * it: one value when there is one (as IAM prints it), else the list, any of which matches. Every event the
 * functions send has the one source, so the allowed pairs are exactly the routings.
 */
export function iamEventsCondition(
  permissions: FunctionPermissions,
): { StringEquals: { 'events:source': string | string[]; 'events:detail-type': string | string[] } } | undefined {
  const put = permissions.eventsPut;
  if (!put?.length) return undefined;
  const one = (values: string[]) => {
    const unique = [...new Set(values)];
    return unique.length === 1 ? (unique[0] as string) : unique;
  };
  return {
    StringEquals: {
      'events:source': one(put.map((r) => r.source)),
      'events:detail-type': one(put.map((r) => r.detailType)),
    },
  };
}
