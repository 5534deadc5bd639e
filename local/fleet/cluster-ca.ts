import { webcrypto } from 'node:crypto';
import * as x509 from '../../shared/x509.ts';
import type { CertificateAuthority } from '../kube-api/index.ts';

export interface ClusterCa {
  certPem: string;
  /** Kept in memory only: signs node certificates for the local stack's YurtHub stand-ins. */
  keys: webcrypto.CryptoKeyPair;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/**
 * The local clusters' CA (kube-apiserver's client CA in a real cluster), published to kube-root-ca.crt.
 * Generated per run and never written to disk.
 */
export async function createClusterCa(now = new Date()): Promise<ClusterCa> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=kubernetes',
    notBefore: now,
    notAfter: new Date(now.getTime() + 3650 * 86_400_000),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  return { certPem: cert.toString('pem'), keys };
}

/** The CA in the shape the local PKI signs with (its key stays in memory; no PEM of it exists). */
export function clusterAuthority(ca: ClusterCa): CertificateAuthority {
  return { certPem: ca.certPem, keyPem: '', cert: new x509.X509Certificate(ca.certPem), privateKey: ca.keys.privateKey };
}
