/**
 * Whether a cluster's YurtHubs can use a pool-spirit as their yurt-coordinator at all. YurtHub has a
 * coordinator client from OpenYurt v1.4.0 (earlier releases name it pool-coordinator, with other object names)
 * through v1.6.0; v1.6.1 removed it. A compat pool on a cluster whose hubs have none would publish a CA and
 * endpoints that nothing reads, so compatibility is refused there, with a reason.
 *
 * What the API tells: OpenYurt v1.7.0 first serves NodePool v1beta2, and its CRDs keep v1alpha1 in the group;
 * the project's own NodePool CRD serves v1beta2 without v1alpha1. v1.4.0 – v1.6.x serve v1beta1 beside
 * v1alpha1 alike, so v1.6.1 and later v1.6 patches cannot be told from v1.6.0 by the API: an operator
 * declares the release on the cluster's registration (`openYurtRelease`), and a declared release decides.
 *
 * Pure: the caller passes what discovery found and what was declared.
 */
import { NODEPOOL_GROUP, servesOpenYurt17OrLater } from '../nodepool-versions.ts';

export const FIRST_COORDINATOR_RELEASE = 'v1.4.0';
export const FIRST_RELEASE_WITHOUT_COORDINATOR = 'v1.6.1';

export type CoordinatorSupport =
  | { supported: true }
  | { supported: false; reason: 'HubsHaveNoCoordinator' | 'HubsPredateYurtCoordinator'; message: string };

/** `v1.6.1` → [1, 6, 1]; undefined for anything else. */
export function parseRelease(release: string): [number, number, number] | undefined {
  const m = /^v(\d{1,4})\.(\d{1,4})\.(\d{1,4})$/.exec(release);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** A release this module names itself (a constant), parsed. */
function knownRelease(release: string): [number, number, number] {
  const parsed = parseRelease(release);
  if (!parsed) throw new Error(`${release} is not a release of the form vX.Y.Z`);
  return parsed;
}

function compareReleases(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

export function coordinatorSupport(input: {
  clusterId: string;
  nodePoolVersions: readonly string[];
  /** The release an operator declared on the registration; it decides over discovery. */
  declaredRelease?: string;
}): CoordinatorSupport {
  const declared = input.declaredRelease ? parseRelease(input.declaredRelease) : undefined;
  const where = `cluster ${input.clusterId}`;
  if (declared) {
    const release = input.declaredRelease;
    if (compareReleases(declared, knownRelease(FIRST_RELEASE_WITHOUT_COORDINATOR)) >= 0) {
      return {
        supported: false,
        reason: 'HubsHaveNoCoordinator',
        message: `${where} is registered as OpenYurt ${release}: YurtHub has no yurt-coordinator client from ${FIRST_RELEASE_WITHOUT_COORDINATOR} on, so compat is refused and no coordinator objects are published for this pool (docs/openyurt.md)`,
      };
    }
    if (compareReleases(declared, knownRelease(FIRST_COORDINATOR_RELEASE)) < 0) {
      return {
        supported: false,
        reason: 'HubsPredateYurtCoordinator',
        message: `${where} is registered as OpenYurt ${release}: YurtHub before ${FIRST_COORDINATOR_RELEASE} looks for a pool-coordinator under other names, so compat is refused (docs/openyurt.md)`,
      };
    }
    return { supported: true };
  }
  if (servesOpenYurt17OrLater(input.nodePoolVersions)) {
    return {
      supported: false,
      reason: 'HubsHaveNoCoordinator',
      message: `${where} serves ${NODEPOOL_GROUP} ${input.nodePoolVersions.join(', ')}, OpenYurt v1.7.0 or later: YurtHub has no yurt-coordinator client from ${FIRST_RELEASE_WITHOUT_COORDINATOR} on, so compat is refused and no coordinator objects are published for this pool (docs/openyurt.md)`,
    };
  }
  return { supported: true };
}
