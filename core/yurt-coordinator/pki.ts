import { checkCertificate } from '../render/cert-check.ts';
import type { KeyFactory } from '../render/keys.ts';
import { loadIssuer } from '../render/pki.ts';
import type { Issued, PkiPolicy } from '../render/pki-spec.ts';
import { COORDINATOR_CLIENT_CA_SUBJECT, coordinatorClientLeaf } from './identity.ts';

/** Files of the cluster's coordinator client PKI, as kept in its Secret. */
export const COORDINATOR_PKI_FILES = {
  caCert: 'yurt-coordinator-client-ca.crt',
  caKey: 'yurt-coordinator-client-ca.key',
  clientCert: 'yurt-coordinator-yurthub-client.crt',
  clientKey: 'yurt-coordinator-yurthub-client.key',
} as const;

export interface CoordinatorPki {
  files: Record<(typeof COORDINATOR_PKI_FILES)[keyof typeof COORDINATOR_PKI_FILES], string>;
  reused: boolean;
  reasons: string[];
}

/**
 * The cluster's coordinator client CA and the one client certificate it signs (upstream's contract has one
 * Secret per cluster, so every compat YurtHub presents the same certificate). Reused byte for byte while
 * good; the client certificate is re-issued when the CA is. Each pool keeps its own PKI: a compat pool only
 * adds this CA to what its apiserver and etcd trust for client certificates.
 */
export async function ensureCoordinatorPki(
  existing: Record<string, string>,
  now: Date,
  keys: KeyFactory,
  policy: PkiPolicy,
): Promise<CoordinatorPki> {
  const f = COORDINATOR_PKI_FILES;
  const reasons: string[] = [];
  const foundCa = checkCertificate(existing[f.caCert], existing[f.caKey], now, policy, {
    subject: COORDINATOR_CLIENT_CA_SUBJECT,
  });
  let ca: Issued;
  let client: Issued | string;
  if (typeof foundCa === 'string') {
    reasons.push(`yurt-coordinator-client-ca: ${foundCa}`);
    const { issueCa } = await loadIssuer();
    ca = await issueCa('yurt-coordinator-client-ca', COORDINATOR_CLIENT_CA_SUBJECT, now, policy, keys);
    client = 'issuer yurt-coordinator-client-ca was renewed';
  } else {
    ca = foundCa;
    client = checkCertificate(existing[f.clientCert], existing[f.clientKey], now, policy, {
      leaf: coordinatorClientLeaf,
      ca: foundCa.cert,
    });
  }
  if (typeof client === 'string') {
    reasons.push(`yurt-coordinator-yurthub-client: ${client}`);
    const { issueLeaf } = await loadIssuer();
    client = await issueLeaf(coordinatorClientLeaf, ca, now, policy, keys);
  }
  return {
    files: {
      [f.caCert]: ca.certPem,
      [f.caKey]: ca.keyPem,
      [f.clientCert]: client.certPem,
      [f.clientKey]: client.keyPem,
    },
    reused: reasons.length === 0,
    reasons,
  };
}
