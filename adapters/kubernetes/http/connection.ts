/**
 * How the functions' small Kubernetes client reaches one apiserver. Deliberately a plain data shape so
 * it can come from a kubeconfig, a secret or a role-based token source alike. There is deliberately no
 * exec credential plugin here: the functions never run a command to get a credential.
 */

/** How to reach and authenticate to one apiserver. Holds credentials: never log or stringify it. */
export interface ClusterConnection {
  /** e.g. https://1.2.3.4:6443 or http://127.0.0.1:8080 (optionally with a path prefix) */
  server: string;
  /** PEM bundle to trust (else system roots) */
  caPem?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  token?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
}
