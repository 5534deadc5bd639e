import * as x509 from '../../shared/x509.ts';
import { SIGNING_ALGORITHM, type KeyFactory } from './keys.ts';
import type { CaId, LeafSpec, PkiPolicy } from './pki-spec.ts';
import { privateKeyPem, serialFor } from './pki-keys.ts';
import type { CryptoKey } from './webcrypto.ts';

export interface Issued {
  cert: x509.X509Certificate;
  certPem: string;
  keyPem: string;
  privateKey: CryptoKey;
}

export const DAY_MS = 86_400_000;
/** Backdating absorbs clock skew between the reconciler and the nodes. */
const BACKDATE_MS = 5 * 60_000;

export async function issueCa(id: CaId, subject: string, now: Date, policy: PkiPolicy, keys: KeyFactory): Promise<Issued> {
  const pair = await keys.generateKeyPair(id);
  const crypto = keys.crypto;
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: await serialFor(id, now, pair.publicKey, crypto),
      name: subject,
      notBefore: new Date(now.getTime() - BACKDATE_MS),
      notAfter: new Date(now.getTime() + policy.caValidityDays * DAY_MS),
      signingAlgorithm: SIGNING_ALGORITHM,
      keys: pair,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(pair.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { cert, certPem: cert.toString('pem'), keyPem: await privateKeyPem(pair.privateKey, crypto), privateKey: pair.privateKey };
}

export async function issueLeaf(leaf: LeafSpec, ca: Issued, now: Date, policy: PkiPolicy, keys: KeyFactory): Promise<Issued> {
  const pair = await keys.generateKeyPair(leaf.id);
  const crypto = keys.crypto;
  const notAfter = Math.min(now.getTime() + policy.leafValidityDays * DAY_MS, ca.cert.notAfter.getTime());
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(leaf.usages.map((u) => x509.ExtendedKeyUsage[u]), false),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey, false, crypto),
    await x509.SubjectKeyIdentifierExtension.create(pair.publicKey, false, crypto),
  ];
  if (leaf.dns.length + leaf.ips.length > 0) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension([
        ...leaf.dns.map((value) => ({ type: 'dns' as const, value })),
        ...leaf.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    );
  }
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: await serialFor(leaf.id, now, pair.publicKey, crypto),
      subject: leaf.subject,
      issuer: ca.cert.subject,
      notBefore: new Date(now.getTime() - BACKDATE_MS),
      notAfter: new Date(notAfter),
      signingAlgorithm: SIGNING_ALGORITHM,
      publicKey: pair.publicKey,
      signingKey: ca.privateKey,
      extensions,
    },
    crypto,
  );
  return { cert, certPem: cert.toString('pem'), keyPem: await privateKeyPem(pair.privateKey, crypto), privateKey: pair.privateKey };
}
