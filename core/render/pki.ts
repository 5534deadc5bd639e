import * as x509 from '../../shared/x509.ts';
import { stableHash } from '../hash.ts';
import type { KeyFactory } from './keys.ts';
import { DAY_MS, issueCa, issueLeaf, type Issued } from './pki-issue.ts';
import { bytesEqual, importPrivateKey, privateKeyPem, publicKeyOf } from './pki-keys.ts';
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
  // What was just issued passes the reuse check by construction; the next reconcile reads it back from the
  // Secrets, so answer that question now instead of re-verifying fifteen artefacts then.
  else remember(stableHash([input.pool, input.leaves, input.policy, result.files]), { ...result, reused: true, reasons: [] }, input.policy);
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
