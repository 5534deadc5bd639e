/**
 * The certificates a YurtHub finds on disk at start, made ahead of time so it never files a
 * CertificateSigningRequest (nothing approves one in the local stack). Each matches the template YurtHub's
 * certificate managers would request (client-go's manager rotates a certificate that does not), read
 * from OpenYurt v1.5.0: pkg/yurthub/certificate/token (client) and .../server (serving).
 */
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '../../../shared/x509.ts';
import type { CertAndKey, CertificateAuthority } from '../pki.ts';

const ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface CertTemplate {
  cn: string;
  orgs: string[];
  dns?: string[];
  ips?: string[];
  usage: 'serverAuth' | 'clientAuth';
  days?: number;
}

export async function issueFromTemplate(ca: CertificateAuthority, t: CertTemplate): Promise<CertAndKey> {
  const crypto = webcrypto;
  const keys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage[t.usage]], false),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey, false, crypto),
  ];
  const san = [
    ...(t.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(t.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  if (san.length) extensions.push(new x509.SubjectAlternativeNameExtension(san));
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial.toString('hex'),
      subject: [{ CN: [t.cn] }, ...t.orgs.map((o) => ({ O: [o] }))],
      issuer: ca.cert.subject,
      notBefore: new Date(now - 5 * 60_000),
      notAfter: new Date(Math.min(now + (t.days ?? 30) * DAY_MS, ca.cert.notAfter.getTime())),
      signingAlgorithm: SIGNING,
      publicKey: keys.publicKey,
      signingKey: ca.privateKey,
      extensions,
    },
    crypto,
  );
  const keyPem = x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { certPem: cert.toString('pem'), keyPem };
}

/** The hub's client identity on the host: system:node:<node> in system:nodes and openyurt:yurthub. */
export function hubClientCertificate(ca: CertificateAuthority, node: string): Promise<CertAndKey> {
  return issueFromTemplate(ca, {
    cn: `system:node:${node}`,
    orgs: ['openyurt:yurthub', 'system:nodes'],
    usage: 'clientAuth',
  });
}

/**
 * The hub's serving certificate: the kubernetes Service names, the host's kubernetes Service ClusterIP, the
 * (unused, since --enable-dummy-if=false) dummy interface address and the bind address.
 */
export function hubServingCertificate(
  ca: CertificateAuthority,
  node: string,
  kubernetesServiceIP: string,
): Promise<CertAndKey> {
  return issueFromTemplate(ca, {
    cn: `system:node:${node}`,
    orgs: ['system:nodes'],
    dns: ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    ips: [kubernetesServiceIP, '169.254.2.1', '127.0.0.1'],
    usage: 'serverAuth',
  });
}
