/**
 * Issuing the pool's certificates: X.509 v3, ECDSA P-256 with SHA-256, written as DER by ./der.ts and
 * signed with node:crypto (docs/decisions/0027-certificates-written-as-der.md). A steady pool never issues,
 * so the reconcile loads this module (and ./der.ts) only when something must be issued (./pki.ts).
 */
import { createHash, createPrivateKey, type KeyObject, sign, X509Certificate } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { EXTENDED_KEY_USAGE_OIDS } from './cert-check.ts';
import { distinguishedName } from './cert-names.ts';
import * as der from './der.ts';
import { ecKeyDer } from './ec-key-der.ts';
import type { KeyFactory } from './keys.ts';
import { pemDecode, pemEncode } from './pem.ts';
import { serialFor } from './pki-keys.ts';
import { type CaId, DAY_MS, type Issued, type LeafSpec, type PkiPolicy } from './pki-spec.ts';

export type { Issued } from './pki-spec.ts';

/** Backdating absorbs clock skew between the reconciler and the nodes. */
const BACKDATE_MS = 5 * 60_000;

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  authorityKeyIdentifier: '2.5.29.35',
  subjectKeyIdentifier: '2.5.29.14',
  subjectAltName: '2.5.29.17',
} as const;
/** The name attributes we issue with. */
const NAME_ATTRIBUTE_OIDS: Record<string, string> = { CN: '2.5.4.3', OU: '2.5.4.11', O: '2.5.4.10' };
/** KeyUsage bits (RFC 5280 4.2.1.3). */
const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 } as const;

const SIGNATURE_ALGORITHM = der.sequence(der.oid(OID.ecdsaWithSha256));

export async function issueCa(
  id: CaId,
  subject: string,
  now: Date,
  policy: PkiPolicy,
  keys: KeyFactory,
): Promise<Issued> {
  const key = newKey(id, keys);
  const subjectName = encodeName(subject);
  return issue({
    serial: serialFor(id, now, key.spki),
    issuer: subjectName,
    subject: subjectName,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + policy.caValidityDays * DAY_MS),
    key,
    signingKey: key.privateKey,
    extensions: [
      extension(OID.basicConstraints, true, der.sequence(der.boolean(true), der.smallInteger(0))),
      extension(
        OID.keyUsage,
        true,
        der.namedBits([KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign]),
      ),
      extension(OID.subjectKeyIdentifier, false, der.octetString(keyIdentifier(key.spki))),
    ],
  });
}

export async function issueLeaf(
  leaf: LeafSpec,
  ca: Issued,
  now: Date,
  policy: PkiPolicy,
  keys: KeyFactory,
): Promise<Issued> {
  const key = newKey(leaf.id, keys);
  const issuer = issuerOf(ca);
  const notAfter = Math.min(now.getTime() + policy.leafValidityDays * DAY_MS, issuer.notAfter.getTime());
  const extensions = [
    // cA FALSE is the default, so DER leaves it out: an empty SEQUENCE.
    extension(OID.basicConstraints, true, der.sequence()),
    extension(OID.keyUsage, true, der.namedBits([KEY_USAGE.digitalSignature])),
    extension(OID.extKeyUsage, false, der.sequence(...leaf.usages.map((u) => der.oid(EXTENDED_KEY_USAGE_OIDS[u])))),
    extension(OID.authorityKeyIdentifier, false, der.sequence(der.implicitPrimitive(0, issuer.keyIdentifier))),
    extension(OID.subjectKeyIdentifier, false, der.octetString(keyIdentifier(key.spki))),
  ];
  if (leaf.dns.length + leaf.ips.length > 0) {
    const names = [
      ...leaf.dns.map((d) => der.implicitPrimitive(2, Buffer.from(d, 'ascii'))),
      ...leaf.ips.map((ip) => der.implicitPrimitive(7, ipAddressBytes(ip))),
    ];
    extensions.push(extension(OID.subjectAltName, false, der.sequence(...names)));
  }
  return issue({
    serial: serialFor(leaf.id, now, key.spki),
    issuer: issuer.subject,
    subject: encodeName(leaf.subject),
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(notAfter),
    key,
    signingKey: issuer.signingKey,
    extensions,
  });
}

interface NewKey {
  privateKey: KeyObject;
  /** DER SubjectPublicKeyInfo. */
  spki: Buffer;
  /** DER PKCS#8 private key. */
  pkcs8: Buffer;
}

function newKey(purpose: string, keys: KeyFactory): NewKey {
  const { privateKey } = keys.generateKeyObjects(purpose);
  return { privateKey, ...ecKeyDer(privateKey) };
}

function issue(cert: {
  serial: string;
  issuer: Buffer;
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  key: NewKey;
  signingKey: KeyObject;
  extensions: Buffer[];
}): Issued {
  // Certificates carry whole seconds; notAfter is reported as written.
  const notAfter = new Date(Math.floor(cert.notAfter.getTime() / 1000) * 1000);
  const tbs = der.sequence(
    der.explicit(0, der.smallInteger(2)), // v3
    der.unsignedInteger(Buffer.from(cert.serial, 'hex')),
    SIGNATURE_ALGORITHM,
    cert.issuer,
    der.sequence(der.time(cert.notBefore), der.time(notAfter)),
    cert.subject,
    cert.key.spki,
    der.explicit(3, der.sequence(...cert.extensions)),
  );
  const signature = sign('sha256', tbs, { key: cert.signingKey, dsaEncoding: 'der' });
  const certDer = der.sequence(tbs, SIGNATURE_ALGORITHM, der.bitString(signature));
  return {
    certPem: pemEncode(certDer, 'CERTIFICATE'),
    keyPem: pemEncode(cert.key.pkcs8, 'PRIVATE KEY'),
    notAfter,
    privateKey: cert.key.privateKey,
  };
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return der.sequence(der.oid(id), ...(critical ? [der.boolean(true)] : []), der.octetString(value));
}

/** `CN=a, OU=b, O=c` as a Name: one attribute per RDN, in the order written. */
function encodeName(text: string): Buffer {
  const attributes = distinguishedName(text);
  if (!attributes) throw new Error(`certificate name ${JSON.stringify(text)}: expected TYPE=value, … (CN, OU, O)`);
  return der.sequence(
    ...attributes.map(([type, value]) => {
      const attributeOid = NAME_ATTRIBUTE_OIDS[type];
      if (!attributeOid) throw new Error(`certificate name ${JSON.stringify(text)}: ${type} is not issued (CN, OU, O)`);
      return der.setOfOne(der.sequence(der.oid(attributeOid), der.directoryString(value)));
    }),
  );
}

/** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. */
function keyIdentifier(spki: Buffer): Buffer {
  const [, publicKeyBits] = der.childrenOf(spki, der.readElement(spki, 0));
  if (!publicKeyBits) throw new Error('SubjectPublicKeyInfo: no subjectPublicKey');
  // The BIT STRING's content starts with its unused-bits octet.
  return createHash('sha1')
    .update(spki.subarray(publicKeyBits.contentStart + 1, publicKeyBits.end))
    .digest();
}

interface IssuerInfo {
  /** The CA's subject exactly as encoded in its certificate: a leaf's issuer must match it byte for byte. */
  subject: Buffer;
  keyIdentifier: Buffer;
  notAfter: Date;
  signingKey: KeyObject;
}

/** Read once per CA, however many leaves it signs in a pass. */
const issuers = new WeakMap<Issued, IssuerInfo>();

function issuerOf(ca: Issued): IssuerInfo {
  let info = issuers.get(ca);
  if (info) return info;
  const certDer = pemDecode(ca.certPem);
  const [tbs] = der.childrenOf(certDer, der.readElement(certDer, 0));
  if (!tbs) throw new Error('CA certificate: no tbsCertificate');
  const fields = der.childrenOf(certDer, tbs);
  // version [0] is optional; after it: serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo.
  const at = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[at + 4];
  const spki = fields[at + 5];
  if (!subject || !spki) throw new Error('CA certificate: no subject or subjectPublicKeyInfo');
  const parsed = new X509Certificate(certDer);
  info = {
    subject: certDer.subarray(subject.start, subject.end),
    keyIdentifier: keyIdentifier(certDer.subarray(spki.start, spki.end)),
    notAfter: parsed.validToDate,
    signingKey: ca.privateKey ?? createPrivateKey({ key: pemDecode(ca.keyPem), format: 'der', type: 'pkcs8' }),
  };
  issuers.set(ca, info);
  return info;
}

/** An iPAddress SAN's octets: 4 for IPv4, 16 for IPv6. */
export function ipAddressBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip) || ip.includes('%')) throw new Error(`SAN ${JSON.stringify(ip)}: expected an IPv4 or IPv6 address`);
  let text = ip;
  let ipv4Tail: number[] = [];
  if (text.includes('.')) {
    const cut = text.lastIndexOf(':');
    ipv4Tail = text
      .slice(cut + 1)
      .split('.')
      .map(Number);
    text = `${text.slice(0, cut + 1)}0:0`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest === undefined ? undefined : rest ? rest.split(':') : [];
  const groups =
    restGroups === undefined
      ? headGroups
      : [...headGroups, ...new Array<string>(8 - headGroups.length - restGroups.length).fill('0'), ...restGroups];
  const bytes = Buffer.alloc(16);
  groups.forEach((g, i) => {
    bytes.writeUInt16BE(parseInt(g, 16), i * 2);
  });
  if (ipv4Tail.length === 4) Buffer.from(ipv4Tail).copy(bytes, 12);
  return bytes;
}
