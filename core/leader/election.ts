/**
 * client-go leader election over a coordination.k8s.io/v1 Lease, as YurtHub runs it in a pool-spirit
 * (Lease kube-system/yurthub, identity = node name, 15 s lease / 10 s renew deadline / 2 s retry).
 *
 * `nextLeaseAction` is one `tryAcquireOrRenew` decision as a pure function: given the Lease as read (or
 * undefined for 404), it says whether to create, take over, renew or wait, and hands back the exact Lease
 * to write. The caller writes it with the resourceVersion it read (an update is a compare-and-swap, so two
 * contenders that both saw an expired lease cannot both win: the second gets 409 Conflict).
 *
 * Expiry here is judged on the lease's renewTime (the brief's rule). client-go itself times expiry from
 * when *it* last saw the record change, to be immune to clock skew between nodes; for contenders that
 * share a clock (the capacity probe) and poll continuously the two agree.
 */

export interface LeaderElectionConfig {
  /** How long a lease is valid after its last renewal; non-leaders wait this long before taking over. */
  leaseDurationSeconds: number;
  /** The leader gives up if it could not renew within this long of starting a renew round. */
  renewDeadlineSeconds: number;
  /** Pause between attempts (client-go adds jitter of up to 1.2× this while acquiring). */
  retryPeriodSeconds: number;
}

/** YurtHub's values (openyurt v1.6), the ones pool-spirit Leases are elected with. */
export const YURTHUB_LEADER_ELECTION: LeaderElectionConfig = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};
export const YURTHUB_LEASE = { namespace: 'kube-system', name: 'yurthub' } as const;

/** client-go's JitterFactor for the acquire loop: each wait is retryPeriod × (1 + rand × 1.2). */
export const ACQUIRE_JITTER_FACTOR = 1.2;

/** The fields of a Lease that election reads and writes (the API's JSON, times as RFC 3339 MicroTime). */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; [field: string]: unknown };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export type LeaseAction =
  /** No Lease yet: create this one (holder = me, transitions 0). */
  | { kind: 'create'; lease: Lease }
  /** Free or expired (or released): update to this Lease with the resourceVersion read. */
  | { kind: 'acquire'; lease: Lease; previousHolder?: string }
  /** Held by me: update renewTime (and nothing else) with the resourceVersion read. */
  | { kind: 'renew'; lease: Lease }
  /** Held by someone else and still valid: try again later. */
  | { kind: 'wait'; holder: string; expiresAt: Date };

/** Validates a config the way client-go's NewLeaderElector does; throws naming the field. */
export function validateLeaderElectionConfig(config: LeaderElectionConfig): LeaderElectionConfig {
  for (const field of ['leaseDurationSeconds', 'renewDeadlineSeconds', 'retryPeriodSeconds'] as const) {
    const v = config[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw new TypeError(`leader election ${field}: expected a positive number of seconds, got ${JSON.stringify(v)}`);
    }
  }
  if (config.leaseDurationSeconds <= config.renewDeadlineSeconds) {
    throw new TypeError('leader election leaseDurationSeconds must be greater than renewDeadlineSeconds');
  }
  if (config.renewDeadlineSeconds <= ACQUIRE_JITTER_FACTOR * config.retryPeriodSeconds) {
    throw new TypeError(
      `leader election renewDeadlineSeconds must be greater than ${ACQUIRE_JITTER_FACTOR} × retryPeriodSeconds`,
    );
  }
  return config;
}

/** The config with every duration divided by `scale` (quick runs of the capacity probe). */
export function scaleLeaderElection(config: LeaderElectionConfig, scale: number): LeaderElectionConfig {
  if (!Number.isFinite(scale) || scale <= 0)
    throw new TypeError(`time scale: expected a positive number, got ${scale}`);
  return {
    leaseDurationSeconds: config.leaseDurationSeconds / scale,
    renewDeadlineSeconds: config.renewDeadlineSeconds / scale,
    retryPeriodSeconds: config.retryPeriodSeconds / scale,
  };
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits, UTC. */
export function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * When the lease stops protecting its holder: renewTime + the holder's leaseDurationSeconds (as client-go:
 * the holder's word counts, not ours). The field is whole seconds, so a scaled-down duration is written
 * rounded up; when the field is exactly our rounded-up duration it means ours. A missing field falls back
 * to ours; a lease without renewTime is treated as expired.
 */
export function leaseExpiry(lease: Lease, config: LeaderElectionConfig): Date | undefined {
  const renew = Date.parse(lease.spec?.renewTime ?? '');
  if (!Number.isFinite(renew)) return undefined;
  const field = lease.spec?.leaseDurationSeconds;
  const seconds = field === undefined || field === leaseDurationField(config) ? config.leaseDurationSeconds : field;
  return new Date(renew + seconds * 1000);
}

/** The integer the Lease's leaseDurationSeconds field carries for a config. */
export function leaseDurationField(config: LeaderElectionConfig): number {
  return Math.max(1, Math.ceil(config.leaseDurationSeconds));
}

/**
 * One tryAcquireOrRenew decision. The lease's `leaseDurationSeconds` is written as whole seconds (the API
 * field is an integer), rounded up so a scaled-down duration never protects less than configured.
 */
export function nextLeaseAction(
  lease: Lease | undefined,
  identity: string,
  now: Date,
  config: LeaderElectionConfig,
  /** The Lease to create when there is none (YurtHub's by default). */
  ref: { namespace: string; name: string } = YURTHUB_LEASE,
): LeaseAction {
  if (!identity) throw new TypeError('leader election identity: expected a non-empty string (the node name)');
  const at = microTime(now);
  const durationField = leaseDurationField(config);
  if (!lease) {
    return {
      kind: 'create',
      lease: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: ref.name, namespace: ref.namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: durationField,
          acquireTime: at,
          renewTime: at,
          leaseTransitions: 0,
        },
      },
    };
  }
  const spec = lease.spec ?? {};
  const holder = spec.holderIdentity ?? '';
  if (holder === identity) {
    // Renewing keeps acquireTime and transitions: only renewTime (and the duration we run with) move.
    return {
      kind: 'renew',
      lease: { ...lease, spec: { ...spec, leaseDurationSeconds: durationField, renewTime: at } },
    };
  }
  const expiresAt = leaseExpiry(lease, config);
  if (holder !== '' && expiresAt && expiresAt.getTime() > now.getTime()) {
    return { kind: 'wait', holder, expiresAt };
  }
  const transitions = spec.leaseTransitions ?? 0;
  return {
    kind: 'acquire',
    previousHolder: holder || undefined,
    lease: {
      ...lease,
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: durationField,
        acquireTime: at,
        renewTime: at,
        // client-go counts a change of holder; taking over a released (empty) lease is one too.
        leaseTransitions: transitions + 1,
      },
    },
  };
}
