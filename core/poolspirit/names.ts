/**
 * The PoolSpirit API's names (poolspirit.io/v1alpha1), apart from its schemas (api.ts, which re-exports
 * them). Why a module of their own: code that only names the API (the apiserver client's paths, the probe,
 * the NodePool move) would otherwise build every PoolSpirit schema on a function's cold start.
 */
export const GROUP = 'poolspirit.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'PoolSpirit';
export const PLURAL = 'poolspirits';
export const SINGULAR = 'poolspirit';
export const SHORT_NAMES = ['ps'];
export const DEFAULT_NAMESPACE = 'pool-spirit-system';
/** The PoolSpirit's status phases: a name of the API, read by the status schema and the product alike. */
export const PHASES = ['Pending', 'Provisioning', 'Running', 'Degraded', 'Paused', 'Invalid'] as const;
export type Phase = (typeof PHASES)[number];
