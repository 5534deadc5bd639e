import { sha256Hex } from '../hash.ts';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'pool-spirit';
export const POOL_LABEL = 'poolspirit.io/pool';
export const NAME_LABEL = 'app.kubernetes.io/name';
export const INSTANCE_LABEL = 'app.kubernetes.io/instance';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';

/**
 * A label value for any string: label values are at most 63 characters, so a long pool name is cut and
 * suffixed with a hash of the whole name (still unique, still recognisable).
 */
export function labelValue(value: string): string {
  if (value.length <= 63) return value;
  return `${value.slice(0, 54).replace(/[-_.]+$/, '')}-${sha256Hex(value).slice(0, 8)}`;
}

/** Labels every object pool-spirit renders carries: how audits find its objects and orphans. */
export function managedLabels(pool: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY, [POOL_LABEL]: labelValue(pool) };
}

/** Label selector for everything pool-spirit rendered for one pool (audits, orphan sweeps, live reads). */
export function managedSelector(pool: string): string {
  return `${MANAGED_BY_LABEL}=${MANAGED_BY},${POOL_LABEL}=${labelValue(pool)}`;
}
