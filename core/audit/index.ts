/** The fleet audit, pure: findings for one cluster's observed state, and the fleet report built from audit records. */
export * from './types.ts';
export { auditCluster, unreachableAudit, healthOf, compareFindings, type AuditOptions } from './audit.ts';
export { poolOfSpirit } from './pool-findings.ts';
export { editorsOf, OWN_FIELD_MANAGERS } from './drift.ts';
export { describeObject, duration, bytes } from './text.ts';
export * from './report.ts';
export { renderFleetReportHtml } from './report-html.ts';
