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
  /**
   * The field at fault, for 'invalid': a kubeconfig field path such as `users[0].user.exec`, or a
   * registration field such as `access.url` — never a value.
   */
  readonly field: string | undefined;
  /**
   * Why the access policy (policy.ts) refused it — our own wording, which holds no value from the kubeconfig
   * or registration. Set only for a refusal: the same access is refused on every load, so retrying cannot help
   * (functions/common/terminal.ts makes it terminal).
   */
  readonly rule: string | undefined;
  constructor(
    clusterId: string,
    kind: ClusterAccessKind | undefined,
    reason: ClusterAccessFailure,
    field?: string,
    rule?: string,
  ) {
    super(
      `cluster ${clusterId}${kind ? ` (access ${kind})` : ''}: ${rule ? `refused: ${rule}` : describe(reason)}${field ? ` (at ${field})` : ''}`,
    );
    this.field = field;
    this.rule = rule;
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
