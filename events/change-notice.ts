import * as z from '../shared/zod.ts';
import { eventEnvelopeSchema } from './envelope.ts';
import { CHANGE_NOTICE_DETAIL_TYPE, FORWARDER_SOURCE } from './source.ts';

/** NodePool, PoolSpirit and Node, and every kind the reconciler renders for a pool (forwarder/watched-resources.ts). */
export const CHANGE_NOTICE_KINDS = [
  'NodePool',
  'PoolSpirit',
  'Deployment',
  'Node',
  'Secret',
  'ConfigMap',
  'ServiceAccount',
  'Service',
  'Pod',
] as const;
export const CHANGE_TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'RESYNC'] as const;

// Kubernetes names are at most 253 characters (DNS subdomain); uids and resourceVersions are short opaque strings.
const k8sName = z.string().check(z.minLength(1), z.maxLength(253));

/**
 * A change notice names an object that changed; it never carries the object. Strict: unknown fields are
 * rejected so that nobody starts shipping object bodies (or secret data) through the bus by accident.
 */
export const changeNoticeDetailSchema = z.strictObject({
  clusterId: z.string().check(z.minLength(1), z.maxLength(128)),
  kind: z.enum(CHANGE_NOTICE_KINDS),
  namespace: z.optional(k8sName),
  name: k8sName,
  uid: z.string().check(z.minLength(1), z.maxLength(128)),
  resourceVersion: z.string().check(z.minLength(1), z.maxLength(64)),
  generation: z.optional(z.number().check(z.int(), z.nonnegative())),
  changeType: z.enum(CHANGE_TYPES),
  /** The NodePool this change belongs to, so a rule can route it straight to reconcile. */
  poolName: z.optional(k8sName),
  observedAt: z.iso.datetime({ offset: true }),
});

export type ChangeNoticeKind = (typeof CHANGE_NOTICE_KINDS)[number];
export type ChangeType = (typeof CHANGE_TYPES)[number];
export type ChangeNotice = z.infer<typeof changeNoticeDetailSchema>;

export const changeNoticeRouting = { source: FORWARDER_SOURCE, detailType: CHANGE_NOTICE_DETAIL_TYPE } as const;

/** A whole EventBridge event carrying a change notice, as a target receives it. */
export const changeNoticeEventSchema = z.extend(eventEnvelopeSchema(changeNoticeDetailSchema), {
  source: z.literal(FORWARDER_SOURCE),
  'detail-type': z.literal(CHANGE_NOTICE_DETAIL_TYPE),
});
export type ChangeNoticeEvent = z.infer<typeof changeNoticeEventSchema>;
