import { describe, expect, it } from 'vitest';
import { describeOpenYurt, releasesServing } from '../../../core/nodepool-versions.ts';
import { coordinatorSupport, parseRelease } from '../../../core/yurt-coordinator/hub-support.ts';

/** The group versions each CRD set serves (OpenYurt's chart CRDs per release; the project's own). */
const V1_5 = ['v1beta1', 'v1alpha1'];
const V1_7 = ['v1beta2', 'v1beta1', 'v1alpha1'];
const OWN = ['v1beta2', 'v1beta1'];

describe('coordinatorSupport', () => {
  it('refuses where the CRDs are OpenYurt v1.7.0 or later, naming the cluster and what it serves', () => {
    const s = coordinatorSupport({ clusterId: 'edge-eu', nodePoolVersions: V1_7 });
    expect(s).toMatchObject({ supported: false, reason: 'HubsHaveNoCoordinator' });
    expect(!s.supported && s.message).toContain('cluster edge-eu serves apps.openyurt.io v1beta2, v1beta1, v1alpha1');
  });

  it("allows OpenYurt v1.4 – v1.6 CRDs and the project's own (whose hubs' release the API cannot tell)", () => {
    expect(coordinatorSupport({ clusterId: 'c', nodePoolVersions: V1_5 })).toEqual({ supported: true });
    expect(coordinatorSupport({ clusterId: 'c', nodePoolVersions: OWN })).toEqual({ supported: true });
  });

  it('a declared release decides over discovery, at both ends of the coordinator releases', () => {
    const at = (declaredRelease: string, versions = V1_5) =>
      coordinatorSupport({ clusterId: 'c', nodePoolVersions: versions, declaredRelease });
    expect(at('v1.6.1')).toMatchObject({ supported: false, reason: 'HubsHaveNoCoordinator' });
    expect(at('v1.10.0')).toMatchObject({ supported: false, reason: 'HubsHaveNoCoordinator' });
    expect(at('v1.6.0')).toEqual({ supported: true });
    expect(at('v1.4.0')).toEqual({ supported: true });
    expect(at('v1.3.4')).toMatchObject({ supported: false, reason: 'HubsPredateYurtCoordinator' });
    // An operator who says v1.6.0 on v1.7 CRDs is believed: the declaration is the override.
    expect(at('v1.6.0', V1_7)).toEqual({ supported: true });
  });

  it('reads only releases spelled vX.Y.Z', () => {
    expect(parseRelease('v1.6.1')).toEqual([1, 6, 1]);
    for (const bad of ['1.6.1', 'v1.6', 'v1.6.1-rc.1', 'v1.6.1 ', 'latest'])
      expect(parseRelease(bad), bad).toBeUndefined();
  });
});

describe('the release a report names from the versions served', () => {
  it('tells the three CRD sets apart', () => {
    expect(releasesServing(V1_7)).toBe('OpenYurt v1.7.0 or later');
    expect(releasesServing(V1_5)).toBe('OpenYurt v1.0 – v1.6.x');
    expect(releasesServing(OWN)).toBe("pool-spirit's own NodePool CRD (no OpenYurt CRDs)");
    expect(describeOpenYurt({ nodePoolApiVersion: 'apps.openyurt.io/v1beta1', nodePoolVersions: V1_5 })).toBe(
      'NodePool v1beta1 (served: v1beta1, v1alpha1; OpenYurt v1.0 – v1.6.x)',
    );
  });
});
