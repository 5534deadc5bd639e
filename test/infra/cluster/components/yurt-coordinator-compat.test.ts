/**
 * infra/cluster/components/yurt-coordinator-compat against the code: its kube-system objects are exactly
 * what core/yurt-coordinator renders for the install, and its Role grants the functions' group exactly what
 * the reconcile uses there (core/security/compat-permissions.ts), every grant by name. The admission
 * component's policy is matched here by shape; its CEL runs on the real kube-apiserver in
 * test/infra/cluster/reconciler/reconciler-bounded.e2e.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../core/kube.ts';
import { objectKey } from '../../../../core/kube.ts';
import type { Grant } from '../../../../core/security/index.ts';
import {
  compareGrants,
  compatApiUses,
  grantKey,
  grantsOf,
  RECONCILER_GROUP,
  usesToGrants,
} from '../../../../core/security/index.ts';
import { compatInstallObjects } from '../../../../core/yurt-coordinator/index.ts';
import { kustomize, kustomizeOverlay } from '../../manifests.ts';

const COMPONENT = 'infra/cluster/components/yurt-coordinator-compat';
const ADMISSION = 'infra/cluster/components/yurt-coordinator-compat-admission';
const GROUP = { kind: 'Group' as const, name: RECONCILER_GROUP };

let base: KubeObject[];
let withComponent: KubeObject[];
const added = () => {
  const before = new Set(base.map(objectKey));
  return withComponent.filter((o) => !before.has(objectKey(o)));
};

beforeAll(async () => {
  base = (await kustomize('infra/cluster')).objects;
  withComponent = await kustomizeOverlay(['infra/cluster'], [COMPONENT]);
});

describe('the yurt-coordinator-compat component', () => {
  it('adds the install objects core/yurt-coordinator renders, byte for byte, and its Role and binding', () => {
    const objects = added();
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual(
      [
        ...compatInstallObjects().map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`),
        'Role kube-system/pool-spirit-reconciler-yurt-coordinator',
        'RoleBinding kube-system/pool-spirit-reconciler-yurt-coordinator',
      ].sort(),
    );
    for (const want of compatInstallObjects()) {
      expect(objects.find((o) => objectKey(o) === objectKey(want))).toEqual(want);
    }
  });

  it('grants the functions exactly what the reconcile uses in kube-system, each grant by name', () => {
    const { missing, extra } = compareGrants(grantsOf(withComponent, GROUP), [
      ...grantsOf(base, GROUP),
      ...usesToGrants(compatApiUses()),
    ]);
    expect({ missing: missing.map(grantKey), extra: extra.map(grantKey) }).toEqual({ missing: [], extra: [] });
    const own: Grant[] = usesToGrants(compatApiUses());
    expect(own.map(grantKey).sort()).toEqual([
      'kube-system core secrets get yurt-coordinator-yurthub-certs',
      'kube-system core secrets patch yurt-coordinator-yurthub-certs',
      'kube-system core services get yurt-coordinator-apiserver',
      'kube-system core services get yurt-coordinator-etcd',
      'kube-system discovery.k8s.io endpointslices get yurt-coordinator-apiserver',
      'kube-system discovery.k8s.io endpointslices get yurt-coordinator-etcd',
      'kube-system discovery.k8s.io endpointslices patch yurt-coordinator-apiserver',
      'kube-system discovery.k8s.io endpointslices patch yurt-coordinator-etcd',
    ]);
  });
});

describe('the yurt-coordinator-compat-admission component', () => {
  it("binds one policy that matches the functions' group's writes to those names only", async () => {
    const objects = await kustomizeOverlay(['infra/cluster'], [COMPONENT, ADMISSION]);
    const policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as KubeObject & {
      spec: {
        matchConditions: Array<{ expression: string }>;
        matchConstraints: { resourceRules: Array<{ resources: string[]; resourceNames: string[] }> };
        validations: unknown[];
      };
    };
    const binding = objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as KubeObject & {
      spec: { policyName: string; validationActions: string[] };
    };
    expect(binding.spec).toMatchObject({ policyName: policy.metadata.name, validationActions: ['Deny'] });
    expect(policy.spec.matchConditions.map((c) => c.expression)).toEqual([
      `'${RECONCILER_GROUP}' in request.userInfo.groups`,
    ]);
    expect(policy.spec.matchConstraints.resourceRules.map((r) => [r.resources, r.resourceNames])).toEqual([
      [['endpointslices'], ['yurt-coordinator-apiserver', 'yurt-coordinator-etcd']],
      [['secrets'], ['yurt-coordinator-yurthub-certs']],
    ]);
    expect(policy.spec.validations).toHaveLength(2);
  });
});
