import { stringify } from 'yaml';

/** A kubeconfig with embedded client certificate: derived from the PKI, so it is as stable as the PKI. */
export function kubeconfigYaml(input: {
  cluster: string;
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  user: string;
}): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: input.cluster, cluster: { server: input.server, 'certificate-authority-data': b64(input.caPem) } },
      ],
      users: [
        {
          name: input.user,
          user: { 'client-certificate-data': b64(input.certPem), 'client-key-data': b64(input.keyPem) },
        },
      ],
      contexts: [{ name: input.cluster, context: { cluster: input.cluster, user: input.user } }],
      'current-context': input.cluster,
      preferences: {},
    },
    { lineWidth: 0 },
  );
}
