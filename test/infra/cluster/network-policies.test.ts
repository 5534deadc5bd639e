import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE } from '../../../core/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import { APISERVER_PORT } from '../../../core/render/layout.ts';
import { find, kustomize, renderPool } from '../manifests.ts';

type Policy = KubeObject & {
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: string[];
    ingress?: any[];
    egress?: any[];
  };
};

const selects = (policy: Policy, labels: Record<string, string>) =>
  Object.entries(policy.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
const ingressPorts = (p: Policy) =>
  (p.spec.ingress ?? []).flatMap((r) => (r.ports ?? []).map((x: { port: number }) => x.port));

describe('network policies of the product namespace', async () => {
  const { objects } = await kustomize('infra/cluster');
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy') as Policy[];
  const podLabels = ((await renderPool()).objects.find((o) => o.kind === 'Deployment') as any).spec.template.metadata
    .labels as Record<string, string>;
  const forwarderLabels = (find(objects, 'Deployment', 'pool-spirit-forwarder', DEFAULT_NAMESPACE) as any).spec.template
    .metadata.labels as Record<string, string>;

  it('deny everything by default, in both directions', () => {
    const deny = find(policies, 'NetworkPolicy', 'default-deny', DEFAULT_NAMESPACE) as Policy;
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
  });

  it('a rendered pool-spirit pod is let in on the apiserver port only, from anywhere, and out to an apiserver port only', () => {
    const applying = policies.filter((p) => p.metadata.name !== 'default-deny' && selects(p, podLabels));
    expect(applying.map((p) => p.metadata.name)).toEqual(['pool-spirit']);
    const [policy] = applying;
    expect(policy.spec.ingress).toEqual([{ ports: [{ protocol: 'TCP', port: APISERVER_PORT }] }]);
    expect(policy.spec.egress).toEqual([
      {
        ports: [
          { protocol: 'TCP', port: 443 },
          { protocol: 'TCP', port: 6443 },
        ],
      },
    ]);
  });

  it('the forwarder is let in on its metrics port only', () => {
    const applying = policies.filter((p) => p.metadata.name !== 'default-deny' && selects(p, forwarderLabels));
    expect(applying.map((p) => p.metadata.name)).toEqual(['pool-spirit-forwarder']);
    const metricsPort = (find(objects, 'Deployment', 'pool-spirit-forwarder') as any).spec.template.spec.containers[0]
      .ports[0].containerPort;
    expect(ingressPorts(applying[0])).toEqual([metricsPort]);
    expect(selects(applying[0], podLabels)).toBe(false);
  });
});
