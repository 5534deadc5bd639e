import type * as X509 from '../../shared/x509.ts';
import { SIGNING_ALGORITHM, type KeyFactory } from './keys.ts';
import type { CaId, LeafSpec, PkiPolicy } from './pki-spec.ts';
import { importPrivateKey, privateKeyPem, serialFor } from './pki-keys.ts';
import type { CryptoKey } from './webcrypto.ts';

/** A certificate and its key, as PEM. */
export interface Issued {
  certPem: string;
  keyPem: string;
  notAfter: Date;
  /** The WebCrypto key when it was just generated; a reused key is imported from keyPem only to sign. */
  privateKey?: CryptoKey;
}

export const DAY_MS = 86_400_000;
/** Backdating absorbs clock skew between the reconciler and the nodes. */
const BACKDATE_MS = 5 * 60_000;

/**
 * @peculiar/x509 (with tsyringe and reflect-metadata) adds some 60 ms to a bundled cold start, and a steady
 * pool never issues: it is loaded on the first issue, not with the reconciler. Bundled, the dynamic import
 * stays in the one file but is evaluated only when it runs.
 */
const loadX509 = () => import('../../shared/x509.ts');

export async function issueCa(
  id: CaId,
  subject: string,
  now: Date,
  policy: PkiPolicy,
  keys: KeyFactory,
): Promise<Issued> {
  const x509 = await loadX509();
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
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(pair.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return {
    certPem: cert.toString('pem'),
    keyPem: await privateKeyPem(pair.privateKey, crypto),
    notAfter: cert.notAfter,
    privateKey: pair.privateKey,
  };
}

export async function issueLeaf(
  leaf: LeafSpec,
  ca: Issued,
  now: Date,
  policy: PkiPolicy,
  keys: KeyFactory,
): Promise<Issued> {
  const x509 = await loadX509();
  const pair = await keys.generateKeyPair(leaf.id);
  const crypto = keys.crypto;
  const caCert = new x509.X509Certificate(ca.certPem);
  const signingKey = ca.privateKey ?? (await importPrivateKey(ca.keyPem, crypto));
  const notAfter = Math.min(now.getTime() + policy.leafValidityDays * DAY_MS, caCert.notAfter.getTime());
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(
      leaf.usages.map((u) => x509.ExtendedKeyUsage[u]),
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey, false, crypto),
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
      issuer: caCert.subject,
      notBefore: new Date(now.getTime() - BACKDATE_MS),
      notAfter: new Date(notAfter),
      signingAlgorithm: SIGNING_ALGORITHM,
      publicKey: pair.publicKey,
      signingKey,
      extensions,
    },
    crypto,
  );
  return {
    certPem: cert.toString('pem'),
    keyPem: await privateKeyPem(pair.privateKey, crypto),
    notAfter: cert.notAfter,
    privateKey: pair.privateKey,
  };
}
