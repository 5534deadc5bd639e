import type { ClusterAccessKind } from '../state-table/registry.ts';

export type ClusterAccessFailure = 'not-registered' | 'not-found' | 'invalid' | 'denied' | 'unavailable';

/**
 * Access failures name the cluster, the access kind and a failure class — never the path, the secret's
 * content, the token or the underlying library message (which might echo any of those).
 */
export class ClusterAccessError extends Error {
  readonly clusterId: string;
  readonly kind: ClusterAccessKind | undefined;
  readonly reason: ClusterAccessFailure;
  /** The kubeconfig field at fault, for 'invalid' (a field path such as `users[ci].exec`, never a value). */
  readonly field: string | undefined;
  constructor(clusterId: string, kind: ClusterAccessKind | undefined, reason: ClusterAccessFailure, field?: string) {
    super(`cluster ${clusterId}${kind ? ` (access ${kind})` : ''}: ${describe(reason)}${field ? ` (at ${field})` : ''}`);
    this.field = field;
    this.name = 'ClusterAccessError';
    this.clusterId = clusterId;
    this.kind = kind;
    this.reason = reason;
  }
}

function describe(reason: ClusterAccessFailure): string {
  switch (reason) {
    case 'not-registered':
      return 'not in the cluster registry';
    case 'not-found':
      return 'the credential source does not exist';
    case 'invalid':
      return 'the credential source is not a usable kubeconfig';
    case 'denied':
      return 'access to the credential source was denied';
    case 'unavailable':
      return 'the credential source could not be reached';
  }
}
