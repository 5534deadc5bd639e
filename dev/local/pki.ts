/**
 * A throwaway PKI for the local control planes, nodes and tests: a CA, a serving certificate for
 * loopback, and client certificates whose subject is the identity (CN = user, O = groups), as
 * kube-apiserver's x509 authenticator reads them. ECDSA P-256, like the product's PKI (core/render/pki*.ts).
 */
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '../../shared/x509.ts';

const ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
  readonly cert: x509.X509Certificate;
  readonly privateKey: CryptoKey;
}

export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
const crypto = webcrypto;

function serial(): string {
  const b = randomBytes(16);
  b.writeUInt8((b.readUInt8(0) & 0x7f) | 0x01, 0);
  return b.toString('hex');
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function validity(days: number): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - 5 * 60_000), notAfter: new Date(now + days * DAY_MS) };
}

export async function createCertificateAuthority(
  commonName = 'local-kube-api-ca',
  days = 30,
): Promise<CertificateAuthority> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial(),
      name: [{ CN: [commonName] }],
      ...validity(days),
      signingAlgorithm: SIGNING,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { cert, certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey), privateKey: keys.privateKey };
}

async function issue(
  ca: CertificateAuthority,
  subject: x509.JsonName,
  usages: Array<'serverAuth' | 'clientAuth'>,
  san: { dns: string[]; ips: string[] },
  days: number,
): Promise<CertAndKey> {
  const keys = await keyPair();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(
      usages.map((u) => x509.ExtendedKeyUsage[u]),
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey, false, crypto),
  ];
  if (san.dns.length + san.ips.length) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension([
        ...san.dns.map((value) => ({ type: 'dns' as const, value })),
        ...san.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    );
  }
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial(),
      subject,
      issuer: ca.cert.subject,
      ...validity(Math.min(days, (ca.cert.notAfter.getTime() - Date.now()) / DAY_MS)),
      signingAlgorithm: SIGNING,
      publicKey: keys.publicKey,
      signingKey: ca.privateKey,
      extensions,
    },
    crypto,
  );
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

/** A serving certificate for the loopback names the local API listens on. */
export function issueServingCertificate(
  ca: CertificateAuthority,
  san: { dns?: string[]; ips?: string[] } = {},
  days = 30,
): Promise<CertAndKey> {
  return issue(
    ca,
    [{ CN: ['local-kube-api'] }],
    ['serverAuth'],
    { dns: san.dns ?? ['localhost'], ips: san.ips ?? ['127.0.0.1', '::1'] },
    days,
  );
}

/** A client certificate for `user` in `groups` (kube reads CN as the user and each O as a group). */
export function issueClientCertificate(
  ca: CertificateAuthority,
  identity: { user: string; groups?: string[]; usages?: Array<'serverAuth' | 'clientAuth'> },
  days = 30,
): Promise<CertAndKey> {
  const subject: x509.JsonName = [{ CN: [identity.user] }, ...(identity.groups ?? []).map((g) => ({ O: [g] }))];
  return issue(ca, subject, identity.usages ?? ['clientAuth'], { dns: [], ips: [] }, days);
}
