import { describe, expect, it } from 'vitest';
import { chooseNodePoolVersion, servedGroupOf } from '../../core/nodepool-versions.ts';

/** An APIGroup document as kube-apiserver answers GET /apis/apps.openyurt.io. */
const group = (versions: string[], preferred: string | null = versions[0] ?? null) => ({
  kind: 'APIGroup',
  apiVersion: 'v1',
  name: 'apps.openyurt.io',
  versions: versions.map((version) => ({ groupVersion: `apps.openyurt.io/${version}`, version })),
  ...(preferred ? { preferredVersion: { groupVersion: `apps.openyurt.io/${preferred}`, version: preferred } } : {}),
});

describe('chooseNodePoolVersion', () => {
  it("reads OpenYurt v1.5's CRD (v1beta1 preferred, v1alpha1 also served) at v1beta1", () => {
    expect(chooseNodePoolVersion(servedGroupOf(group(['v1beta1', 'v1alpha1'])))).toEqual({
      ok: true,
      version: 'v1beta1',
      apiVersion: 'apps.openyurt.io/v1beta1',
    });
  });

  it("reads OpenYurt v1.7's CRD (v1beta2 preferred) and the project's own at v1beta2", () => {
    expect(chooseNodePoolVersion(servedGroupOf(group(['v1beta2', 'v1beta1', 'v1alpha1'])))).toMatchObject({
      apiVersion: 'apps.openyurt.io/v1beta2',
    });
  });

  it('takes the preferred version over a newer one it also reads', () => {
    expect(chooseNodePoolVersion(servedGroupOf(group(['v1beta2', 'v1beta1'], 'v1beta1')))).toMatchObject({
      version: 'v1beta1',
    });
  });

  it('falls back to the newest version it reads when the preferred one is not among them', () => {
    expect(chooseNodePoolVersion(servedGroupOf(group(['v1alpha1', 'v1beta1'], 'v1alpha1')))).toMatchObject({
      version: 'v1beta1',
    });
    expect(chooseNodePoolVersion(servedGroupOf(group(['v1beta1', 'v1beta2'], null)))).toMatchObject({
      version: 'v1beta2',
    });
  });

  it('refuses a cluster serving only v1alpha1, naming the cluster and what it serves', () => {
    const choice = chooseNodePoolVersion(servedGroupOf(group(['v1alpha1'])), 'edge-eu-1');
    expect(choice).toEqual({
      ok: false,
      served: ['v1alpha1'],
      message:
        'cluster edge-eu-1 serves apps.openyurt.io v1alpha1: pool-spirit reads NodePool v1beta2 or v1beta1 ' +
        '(OpenYurt v1.0 and later, or infra/crds/nodepool.yaml on a cluster without OpenYurt)',
    });
  });

  it('refuses a cluster without the group', () => {
    const choice = chooseNodePoolVersion(servedGroupOf(undefined), 'plain-eks');
    expect(choice.ok).toBe(false);
    expect(choice.ok ? '' : choice.message).toMatch(/^cluster plain-eks does not serve apps\.openyurt\.io: /);
  });

  it('ignores entries of another shape instead of trusting them', () => {
    expect(servedGroupOf({ versions: [{ version: 3 }, 'v1beta1', null, { version: 'v1beta1' }] })).toEqual({
      versions: ['v1beta1'],
    });
    expect(servedGroupOf('not a document')).toBeUndefined();
    expect(chooseNodePoolVersion(servedGroupOf({ versions: 'v1beta2' })).ok).toBe(false);
  });
});
