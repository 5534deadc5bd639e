import { describe, expect, it } from 'vitest';
import { find, kustomize, kustomizeOverlay } from '../manifests.ts';

/** What the product's pods are judged by: test/e2e/pod-security/ (the real admission, restricted). */
describe('Pod Security of pool-spirit-system', () => {
  it('the namespace enforces restricted; the host-network component relaxes enforcement only', async () => {
    const base = find((await kustomize('infra/cluster')).objects, 'Namespace', 'pool-spirit-system').metadata.labels!;
    expect(base).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
    const overlay = await kustomizeOverlay(['infra/cluster'], ['infra/cluster/components/host-network-pools']);
    const relaxed = find(overlay, 'Namespace', 'pool-spirit-system').metadata.labels!;
    expect(relaxed).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
  });
});
