// @peculiar/x509 resolves its algorithm providers through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { sha256Hex, stableHash } from '../hash.ts';
import { KEY_ALGORITHM, SIGNING_ALGORITHM, type KeyFactory } from './keys.ts';
import type { Crypto, CryptoKey } from './webcrypto.ts';
import { caSubject, type CaId, type LeafId, type LeafSpec, type PkiPolicy } from './pki-spec.ts';

/** File name of every PKI artefact, as stored in Secret data (and mounted). */
export const PKI_FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  etcdCaCert: 'etcd-ca.crt',
  etcdCaKey: 'etcd-ca.key',
  saPublic: 'sa.pub',
  saPrivate: 'sa.key',
} as const;
export const certFile = (id: LeafId | CaId) => `${id}.crt`;
export const keyFile = (id: LeafId | CaId) => `${id}.key`;

export interface PkiResult {
  /** Every artefact by file name (PEM text). Private keys included: they go into Secret data only. */
  files: Record<string, string>;
  /** True when nothing had to be issued: the existing material is reused byte for byte. */
  reused: boolean;
  /** Why each issued artefact was issued (empty when reused). */
  reasons: string[];
  /** Earliest expiry among the leaf certificates, and among the two CAs. */
  notAfter: Date;
  caNotAfter: Date;
}

interface Issued {
  cert: x509.X509Certificate;
  certPem: string;
  keyPem: string;
  privateKey: CryptoKey;
}

const DAY_MS = 86_400_000;
/** Backdating absorbs clock skew between the reconciler and the nodes. */
const BACKDATE_MS = 5 * 60_000;

export interface PkiInput {
  pool: string;
  leaves: LeafSpec[];
  existing: Record<string, string>;
  now: Date;
  keys: KeyFactory;
  policy: PkiPolicy;
}

/**
 * Reuses every certificate and key that is still good and issues only what is missing, unreadable,
 * expiring within policy.renewBeforeDays, signed by a CA that changed, or whose names (subject, SANs,
 * usages) no longer match. Reuse is byte for byte, so a steady pool renders identical Secrets forever.
 */
export async function ensurePki(input: PkiInput): Promise<PkiResult> {
  const memoKey = stableHash([input.pool, input.leaves, input.policy, input.existing]);
  const memo = reuseMemo.get(memoKey);
  if (memo && input.now.getTime() < memo.renewAt) return memo.result;
  const result = await checkOrIssue(input);
  if (result.reused) remember(memoKey, result, input.policy);
  return result;
}

/**
 * Verifying seven certificates and eight keys costs tens of milliseconds, and a steady pool asks the same
 * question on every reconcile. A fully reused result depends only on the inputs and on `now` staying
 * before the first renewal point, so it is memoised (bounded, per process) until then.
 */
const reuseMemo = new Map<string, { result: PkiResult; renewAt: number }>();
const MEMO_LIMIT = 2000;

function remember(key: string, result: PkiResult, policy: PkiPolicy): void {
  const renewAt = Math.min(result.notAfter.getTime(), result.caNotAfter.getTime()) - policy.renewBeforeDays * DAY_MS;
  if (reuseMemo.size >= MEMO_LIMIT) reuseMemo.delete(reuseMemo.keys().next().value!);
  reuseMemo.set(key, { result, renewAt });
}

async function checkOrIssue(input: PkiInput): Promise<PkiResult> {
  const { existing, now, keys, policy } = input;
  const crypto = keys.crypto;
  const reasons: string[] = [];
  const files: Record<string, string> = {};
  const cas = {} as Record<CaId, Issued & { renewed: boolean }>;

  for (const id of ['ca', 'etcd-ca'] as const) {
    const subject = caSubject(id, input.pool);
    const found = await reusable(existing, id, now, policy, crypto, { subject });
    if (typeof found !== 'string') {
      cas[id] = { ...found, renewed: false };
    } else {
      reasons.push(`${id}: ${found}`);
      cas[id] = { ...(await issueCa(id, subject, now, policy, keys)), renewed: true };
    }
    files[certFile(id)] = cas[id].certPem;
    files[keyFile(id)] = cas[id].keyPem;
  }

  let earliest = Infinity;
  for (const leaf of input.leaves) {
    const ca = cas[leaf.issuer];
    let found: Issued | string = ca.renewed ? `issuer ${leaf.issuer} was renewed` : await reusable(existing, leaf.id, now, policy, crypto, { leaf, ca: ca.cert });
    if (typeof found === 'string') {
      reasons.push(`${leaf.id}: ${found}`);
      found = await issueLeaf(leaf, ca, now, policy, keys);
    }
    files[certFile(leaf.id)] = found.certPem;
    files[keyFile(leaf.id)] = found.keyPem;
    earliest = Math.min(earliest, found.cert.notAfter.getTime());
  }

  const sa = await serviceAccountKeys(existing, keys);
  if (sa.reason) reasons.push(`service-account key: ${sa.reason}`);
  files[PKI_FILES.saPrivate] = sa.privatePem;
  files[PKI_FILES.saPublic] = sa.publicPem;

  return { files, reused: reasons.length === 0, reasons, notAfter: new Date(earliest), caNotAfter: new Date(Math.min(cas.ca.cert.notAfter.getTime(), cas['etcd-ca'].cert.notAfter.getTime())) };
}

type Expectation = { subject: string } | { leaf: LeafSpec; ca: x509.X509Certificate };

/** The existing certificate and key if they can be kept, else the reason they cannot. */
async function reusable(existing: Record<string, string>, id: LeafId | CaId, now: Date, policy: PkiPolicy, crypto: Crypto, expect: Expectation): Promise<Issued | string> {
  const certPem = existing[certFile(id)];
  const keyPem = existing[keyFile(id)];
  if (!certPem || !keyPem) return 'not present';
  let cert: x509.X509Certificate;
  let privateKey: CryptoKey;
  try {
    cert = new x509.X509Certificate(certPem);
    privateKey = await importPrivateKey(keyPem, crypto);
  } catch {
    return 'unreadable';
  }
  if (!bytesEqual(await publicKeyOf(privateKey, crypto), cert.publicKey.rawData)) return 'key does not match the certificate';
  if (cert.notAfter.getTime() - now.getTime() <= policy.renewBeforeDays * DAY_MS) {
    return `expires ${cert.notAfter.toISOString()}, within ${policy.renewBeforeDays} days`;
  }
  if ('subject' in expect) {
    if (cert.subject !== new x509.Name(expect.subject).toString()) return 'subject changed';
    const bc = cert.getExtension(x509.BasicConstraintsExtension);
    if (!bc?.ca) return 'not a CA certificate';
  } else {
    if (!(await cert.verify({ publicKey: expect.ca.publicKey, signatureOnly: true }, crypto))) return 'not signed by the current CA';
    if (cert.subject !== new x509.Name(expect.leaf.subject).toString()) return 'subject changed';
    const sanDiff = diffSans(cert, expect.leaf);
    if (sanDiff) return `SANs changed (${sanDiff})`;
    const eku = cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages.map(String).sort().join(',') ?? '';
    if (eku !== expect.leaf.usages.map((u) => x509.ExtendedKeyUsage[u]).sort().join(',')) return 'usages changed';
  }
  return { cert, certPem, keyPem, privateKey };
}

function diffSans(cert: x509.X509Certificate, leaf: LeafSpec): string | undefined {
  const have = new Set(
    (cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON() ?? []).map((n) => `${n.type}:${n.value}`),
  );
  const want = new Set([...leaf.dns.map((d) => `dns:${d}`), ...leaf.ips.map((ip) => `ip:${ip}`)]);
  const added = [...want].filter((n) => !have.has(n)).map((n) => `+${n.slice(n.indexOf(':') + 1)}`);
  const removed = [...have].filter((n) => !want.has(n)).map((n) => `-${n.slice(n.indexOf(':') + 1)}`);
  return added.length + removed.length > 0 ? [...added, ...removed].join(' ') : undefined;
}

async function issueCa(id: CaId, subject: string, now: Date, policy: PkiPolicy, keys: KeyFactory): Promise<Issued> {
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

async function issueLeaf(leaf: LeafSpec, ca: Issued, now: Date, policy: PkiPolicy, keys: KeyFactory): Promise<Issued> {
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

async function serviceAccountKeys(existing: Record<string, string>, keys: KeyFactory): Promise<{ privatePem: string; publicPem: string; reason?: string }> {
  const crypto = keys.crypto;
  const privatePem = existing[PKI_FILES.saPrivate];
  const publicPem = existing[PKI_FILES.saPublic];
  let reason = 'not present';
  if (privatePem && publicPem) {
    try {
      const key = await importPrivateKey(privatePem, crypto);
      if (bytesEqual(await publicKeyOf(key, crypto), x509.PemConverter.decodeFirst(publicPem))) return { privatePem, publicPem };
      reason = 'public key does not match';
    } catch {
      reason = 'unreadable';
    }
  }
  const pair = await keys.generateKeyPair('service-account');
  return {
    privatePem: await privateKeyPem(pair.privateKey, crypto),
    publicPem: x509.PemConverter.encode(await crypto.subtle.exportKey('spki', pair.publicKey), 'PUBLIC KEY'),
    reason,
  };
}

async function importPrivateKey(pem: string, crypto: Crypto): Promise<CryptoKey> {
  return crypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(pem), KEY_ALGORITHM, true, ['sign']);
}

async function privateKeyPem(key: CryptoKey, crypto: Crypto): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** SPKI bytes of the public half of a private key (WebCrypto has no direct derivation; JWK carries x, y). */
async function publicKeyOf(privateKey: CryptoKey, crypto: Crypto): Promise<ArrayBuffer> {
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', privateKey);
  const pub = await crypto.subtle.importKey('jwk', { kty, crv, x, y }, KEY_ALGORITHM, true, ['verify']);
  return crypto.subtle.exportKey('spki', pub);
}

/** A positive, unique-enough serial derived from the key: no hidden randomness in the core. */
async function serialFor(id: string, now: Date, publicKey: CryptoKey, crypto: Crypto): Promise<string> {
  const spki = Buffer.from(await crypto.subtle.exportKey('spki', publicKey)).toString('hex');
  const hex = sha256Hex(`${id}|${now.toISOString()}|${spki}`).slice(0, 32);
  return ((parseInt(hex[0], 16) & 7) | 1).toString(16) + hex.slice(1);
}

function bytesEqual(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean {
  return Buffer.compare(toBuffer(a), toBuffer(b)) === 0;
}

function toBuffer(v: ArrayBuffer | ArrayBufferView): Buffer {
  return ArrayBuffer.isView(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : Buffer.from(v);
}
