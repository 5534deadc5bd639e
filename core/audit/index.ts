/** The fleet audit, pure: findings for one cluster's observed state, and the fleet report built from audit records. */

export { type AuditOptions, auditCluster, compareFindings, healthOf, unreachableAudit } from './audit.ts';
export {
  type AuditWriteReason,
  auditDigest,
  auditSubstance,
  auditWriteReason,
  DEFAULT_AUDIT_HEARTBEAT_MS,
  type RecordedAudit,
  unchangedSince,
} from './audit-record.ts';
export { editorsOf, OWN_FIELD_MANAGERS } from './drift.ts';
export { poolOfSpirit } from './pool-findings.ts';
export * from './report.ts';
export { renderFleetReportHtml } from './report-html.ts';
export { bytes, describeObject, duration } from './text.ts';
export * from './types.ts';
