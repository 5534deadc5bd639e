/** From what a person asked for (flags, an event) to a validated RolloutSpec and the initial state. */

import { type BundleCatalog, DEFAULT_BUNDLES } from '../poolspirit/defaults.ts';
import { parseDuration, parseLimit, RolloutSpecError } from './limits.ts';
import { validatePatch } from './spec-patch.ts';
import type { ClusterProgress, RolloutSpec, RolloutState } from './types.ts';

export interface RolloutSpecInput {
  id: string;
  /** Bundle version; shorthand for the patch `{version}`. */
  version?: string;
  /** Any other spec change, as a JSON merge patch (combined with `version` when both are given). */
  patch?: Record<string, unknown>;
  selector?: Record<string, string>;
  /** Canary cluster ids, or how many of the selected clusters (the first by id). */
  canary?: string[] | number;
  maxConcurrency?: string | number;
  maxFailures?: string | number;
  /** Duration text (`5m`) or milliseconds. */
  soak?: string | number;
  progressDeadline?: string | number;
  autoRollback?: boolean;
}

export const ROLLOUT_DEFAULTS = {
  maxConcurrency: '1',
  maxFailures: '0',
  soak: '5m',
  progressDeadline: '30m',
  autoRollback: false,
} as const;

const ROLLOUT_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Validates every field; the error names the field and what was expected. */
export function parseRolloutSpec(input: RolloutSpecInput, bundles: BundleCatalog = DEFAULT_BUNDLES): RolloutSpec {
  if (typeof input?.id !== 'string' || !ROLLOUT_ID.test(input.id)) {
    throw new RolloutSpecError(
      'id',
      `expected a DNS label (a-z, 0-9, "-", at most 63 chars), got ${JSON.stringify(input?.id)}`,
    );
  }
  if (
    input.version !== undefined &&
    (typeof input.version !== 'string' || !/^[A-Za-z0-9][-A-Za-z0-9_.+]{0,127}$/.test(input.version))
  ) {
    throw new RolloutSpecError(
      'version',
      `expected a bundle version such as 0.2.0, got ${JSON.stringify(input.version)}`,
    );
  }
  // Caught here, not by the first reconcile: a version no pool can render would fail every canary.
  if (input.version !== undefined && !Object.hasOwn(bundles, input.version)) {
    throw new RolloutSpecError(
      'version',
      `unknown bundle ${JSON.stringify(input.version)}; known bundles: ${Object.keys(bundles).join(', ')}`,
    );
  }
  if (input.version === undefined && input.patch === undefined)
    throw new RolloutSpecError('version', 'expected a version or a spec patch to roll out');
  const patch = validatePatch({
    ...(input.patch ?? {}),
    ...(input.version !== undefined ? { version: input.version } : {}),
  });
  const selector = input.selector ?? {};
  for (const [k, v] of Object.entries(selector)) {
    if (!LABEL_KEY.test(k))
      throw new RolloutSpecError(`selector.${k}`, 'expected a label key such as region or example.com/group');
    if (typeof v !== 'string' || !LABEL_VALUE.test(v))
      throw new RolloutSpecError(`selector.${k}`, `expected a label value, got ${JSON.stringify(v)}`);
  }
  let canary: RolloutSpec['canary'];
  if (Array.isArray(input.canary)) {
    if (input.canary.length === 0) throw new RolloutSpecError('canary', 'expected at least one cluster id');
    if (new Set(input.canary).size !== input.canary.length)
      throw new RolloutSpecError('canary', 'lists a cluster twice');
    canary = { clusters: [...input.canary] };
  } else if (input.canary !== undefined) {
    if (!Number.isInteger(input.canary) || input.canary < 1)
      throw new RolloutSpecError('canary', `expected cluster ids or a count ≥ 1, got ${JSON.stringify(input.canary)}`);
    canary = { count: input.canary };
  }
  return {
    id: input.id,
    patch,
    selector,
    ...(canary ? { canary } : {}),
    maxConcurrency: parseLimit('maxConcurrency', input.maxConcurrency ?? ROLLOUT_DEFAULTS.maxConcurrency, 1),
    maxFailures: parseLimit('maxFailures', input.maxFailures ?? ROLLOUT_DEFAULTS.maxFailures, 0),
    soakMs: parseDuration('soak', input.soak ?? ROLLOUT_DEFAULTS.soak),
    progressDeadlineMs: parseDuration('progressDeadline', input.progressDeadline ?? ROLLOUT_DEFAULTS.progressDeadline),
    autoRollback: input.autoRollback ?? ROLLOUT_DEFAULTS.autoRollback,
  };
}

/**
 * The initial state over the clusters the selector picked (ids from the registry). The cluster set is
 * fixed here: a cluster registered later is not pulled into a running rollout.
 */
export function newRolloutState(spec: RolloutSpec, selectedClusterIds: string[], now: Date): RolloutState {
  const ids = [...new Set(selectedClusterIds)].sort();
  if (ids.length === 0) {
    const sel = Object.entries(spec.selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    throw new RolloutSpecError('selector', sel ? `no registered cluster carries ${sel}` : 'no cluster is registered');
  }
  let canaries: string[] = [];
  if (spec.canary && 'clusters' in spec.canary) {
    const unknown = spec.canary.clusters.filter((c) => !ids.includes(c));
    if (unknown.length) throw new RolloutSpecError('canary', `not among the selected clusters: ${unknown.join(', ')}`);
    canaries = spec.canary.clusters;
  } else if (spec.canary) {
    if (spec.canary.count >= ids.length) {
      throw new RolloutSpecError(
        'canary',
        `a canary of ${spec.canary.count} leaves no cluster for the waves (${ids.length} selected)`,
      );
    }
    canaries = ids.slice(0, spec.canary.count);
  }
  const ordered = [...canaries, ...ids.filter((id) => !canaries.includes(id))];
  const at = now.toISOString();
  const clusters: ClusterProgress[] = ordered.map((id) => ({
    id,
    phase: 'Pending',
    canary: canaries.includes(id),
    pools: {},
  }));
  return { id: spec.id, spec, phase: 'Progressing', wave: 0, version: 0, createdAt: at, updatedAt: at, clusters };
}
