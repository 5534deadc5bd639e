/**
 * A pod a test stands in for a controller with, in a namespace that enforces Pod Security `restricted` (the
 * product's: infra/cluster labels it so, and kube-apiserver's PodSecurity admission refuses anything less).
 */
export function restrictedPod(opts: {
  name: string;
  namespace: string;
  labels?: Record<string, string>;
  nodeName?: string;
}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: opts.name, namespace: opts.namespace, labels: opts.labels },
    spec: {
      ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'c',
          image: 'x',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  };
}
