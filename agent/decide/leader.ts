/**
 * The leader report from the YurtHub leader Lease (kube-system/yurthub), as read at one moment. Pure.
 */
import type { PoolSpiritStatus } from '../../core/poolspirit/api.ts';

export type LeaderStatus = NonNullable<PoolSpiritStatus['leader']>;

/** The Lease fields the report depends on (coordination.k8s.io/v1 LeaseSpec). */
export interface LeaseLike {
  spec?: {
    holderIdentity?: string | null;
    renewTime?: string | null;
    acquireTime?: string | null;
    leaseDurationSeconds?: number | null;
    leaseTransitions?: number | null;
  };
}

/**
 * holder is reported only while the lease is unexpired: client-go treats a Lease whose renewTime +
 * leaseDurationSeconds has passed as free for the taking, so its holderIdentity names nobody in charge.
 * renewTime and transitions are kept for an expired Lease (they say when the last leader went quiet);
 * a missing Lease reports nothing but the time of the read.
 */
export function leaderFromLease(lease: LeaseLike | undefined, observedAt: Date): LeaderStatus {
  const observedTime = observedAt.toISOString();
  const spec = lease?.spec;
  if (!spec) return { observedTime };
  const renewTime = spec.renewTime ?? spec.acquireTime ?? undefined;
  const transitions =
    typeof spec.leaseTransitions === 'number' && spec.leaseTransitions >= 0 ? spec.leaseTransitions : undefined;
  const report: LeaderStatus = { observedTime };
  if (renewTime) report.renewTime = renewTime;
  if (transitions !== undefined) report.transitions = transitions;
  if (spec.holderIdentity && !leaseExpired(renewTime, spec.leaseDurationSeconds, observedAt))
    report.holder = spec.holderIdentity;
  return report;
}

/** A Lease without a renew time or a duration cannot prove it is held, so it counts as expired. */
export function leaseExpired(
  renewTime: string | null | undefined,
  durationSeconds: number | null | undefined,
  now: Date,
): boolean {
  const renewed = Date.parse(renewTime ?? '');
  if (!Number.isFinite(renewed) || typeof durationSeconds !== 'number' || durationSeconds <= 0) return true;
  return now.getTime() > renewed + durationSeconds * 1000;
}

/**
 * Changes a reader must see at once (a new leader, a lost one, a transition). A renewal by the same
 * holder is not one: renewTime refreshes with the periodic report, so a steady leader costs one status
 * write per report interval instead of one per renewal.
 */
export function leaderChangedMeaningfully(before: LeaderStatus | undefined, after: LeaderStatus): boolean {
  if (!before) return true;
  return (
    before.holder !== after.holder || before.transitions !== after.transitions || !before.renewTime !== !after.renewTime
  );
}
