/**
 * Event sources and detail-types the system routes. Rules (serverless.yml), the forwarder, the functions
 * and the local bus all refer to these constants, so a rename happens in one place.
 */

/** `source` of change notices sent by the per-cluster forwarder. */
export const FORWARDER_SOURCE = 'pool-spirit.forwarder';
/** `source` of follow-up events the functions emit (reconcile requests and the like). */
export const RECONCILER_SOURCE = 'pool-spirit.reconciler';

export const EVENT_SOURCES = {
  forwarder: FORWARDER_SOURCE,
  reconciler: RECONCILER_SOURCE,
} as const;
export type EventSource = (typeof EVENT_SOURCES)[keyof typeof EVENT_SOURCES];

/** `detail-type` of a change notice: something about a cluster object changed. */
export const CHANGE_NOTICE_DETAIL_TYPE = 'Cluster Change Notice';
/** `detail-type` of a request to reconcile one (cluster, NodePool) key. */
export const RECONCILE_REQUEST_DETAIL_TYPE = 'Reconcile Request';

/** `detail-type` of a request to audit one registered cluster (the scheduled audit fans these out). */
export const AUDIT_REQUEST_DETAIL_TYPE = 'Cluster Audit Request';

/** `detail-type` of a request to probe the YurtHub leader election of one cluster's pools now. */
export const LEADER_PROBE_REQUEST_DETAIL_TYPE = 'Leader Probe Request';

export const DETAIL_TYPES = {
  changeNotice: CHANGE_NOTICE_DETAIL_TYPE,
  reconcileRequest: RECONCILE_REQUEST_DETAIL_TYPE,
  auditRequest: AUDIT_REQUEST_DETAIL_TYPE,
  leaderProbeRequest: LEADER_PROBE_REQUEST_DETAIL_TYPE,
} as const;
export type DetailType = (typeof DETAIL_TYPES)[keyof typeof DETAIL_TYPES];

/** What EventBridge puts on events fired by a schedule rule (`rate(...)` / `cron(...)`). */
export const SCHEDULED_EVENT_SOURCE = 'aws.events';
export const SCHEDULED_EVENT_DETAIL_TYPE = 'Scheduled Event';

/** AWS service events about EC2 instances; AWS delivers them to the account's default bus only. */
export const EC2_SOURCE = 'aws.ec2';
export const EC2_STATE_CHANGE_DETAIL_TYPE = 'EC2 Instance State-change Notification';
export const EC2_SPOT_INTERRUPTION_DETAIL_TYPE = 'EC2 Spot Instance Interruption Warning';

/** The default event bus name used when an entry or a rule names none. */
export const DEFAULT_EVENT_BUS = 'default';
