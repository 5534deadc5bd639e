/**
 * How a live PoolSpirit counts for a rollout. Healthy at the target means: the spec carries the patch, the
 * reconciler has looked at this generation, Available=True, the running versions are the ones the spec
 * asks for (status.versions.current = desired; for a bundle rollout also the bundle itself), and a leader
 * YurtHub holds the Lease (LeaderElected=True).
 */
import type { PoolSpiritStatus } from '../poolspirit/api.ts';
import { jsonEqual, specMatchesPatch, specMatchesSnapshot } from './spec-patch.ts';
import type { PoolObservation } from './types.ts';

export interface LivePoolSpirit {
  metadata: { name: string; generation?: number };
  spec?: Record<string, unknown>;
  status?: PoolSpiritStatus;
}

const VERSION_FIELDS = ['bundle', 'apiServer', 'etcd', 'agent'] as const;

export function observePoolSpirit(
  live: LivePoolSpirit,
  patch: Record<string, unknown>,
  /** The pre-rollout values of the patched fields, when the rollout changed this pool. */
  snapshot?: Record<string, unknown>,
): PoolObservation {
  const status = live.status ?? {};
  const generation = live.metadata.generation ?? 0;
  const current = (status.observedGeneration ?? -1) >= generation;
  const cond = (type: string) => (status.conditions ?? []).find((c) => c.type === type);
  const available = cond('Available');
  const leader = cond('LeaderElected');
  const versions = status.versions ?? {};
  const desired = versions.desired ?? {};
  const running = versions.current ?? {};
  const wantedBundle = typeof patch.version === 'string' ? patch.version : undefined;
  const atVersion =
    current &&
    versions.desired !== undefined &&
    VERSION_FIELDS.every((f) => desired[f] === undefined || jsonEqual(desired[f], running[f])) &&
    (wantedBundle === undefined || running.bundle === wantedBundle);
  const specAtTarget = specMatchesPatch(live.spec, patch);
  const obs: PoolObservation = {
    name: live.metadata.name,
    specAtTarget,
    specAtPrevious: snapshot ? specMatchesSnapshot(live.spec, patch, snapshot) : true,
    available: current && available?.status === 'True',
    atVersion,
    leaderHealthy: leader?.status === 'True',
  };
  if (current && status.phase === 'Invalid') obs.invalid = available?.message ?? 'invalid spec';
  obs.reason = !specAtTarget
    ? 'spec not updated yet'
    : !current
      ? `generation ${generation} not yet observed by the reconciler`
      : obs.invalid
        ? obs.invalid
        : !obs.available
          ? `not available: ${available?.reason ?? 'no condition yet'}${available?.message ? ` (${available.message})` : ''}`
          : !atVersion
            ? `running ${describeVersions(running)}, want ${describeVersions(desired)}`
            : !obs.leaderHealthy
              ? `no healthy leader: ${leader?.reason ?? 'no condition yet'}`
              : undefined;
  if (obs.reason === undefined) delete obs.reason;
  return obs;
}

function describeVersions(v: Record<string, string | undefined>): string {
  const parts = VERSION_FIELDS.filter((f) => v[f] !== undefined).map((f) => `${f}=${v[f]}`);
  return parts.length ? parts.join(',') : 'nothing yet';
}
