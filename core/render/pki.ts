import { createHash, type Hash } from 'node:crypto';
import { canonicalJson } from '../hash.ts';
import { checkCertificate, type Reusable, readPrivateKey } from './cert-check.ts';
import { ecPublicKeyDer } from './ec-key-der.ts';
import type { KeyFactory } from './keys.ts';
import { pemDecode } from './pem.ts';
import { privateKeyPem, publicKeyPem } from './pki-keys.ts';
import { type CaId, caSubject, DAY_MS, type Issued, type LeafId, type LeafSpec, type PkiPolicy } from './pki-spec.ts';

/**
 * The issuer and its DER writer load only when something must be issued: a steady pool never issues, and
 * every cold start would compile them (bundled, the import becomes a chunk of its own).
 */
export const loadIssuer = () => import('./pki-issue.ts');

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

/**
 * That the PKI files hashed into `key` (pkiInputKey) passed the reuse check, or were just issued, and are
 * good until the first renewal point after `notAfter` and `caNotAfter`. A render hands one out for what it
 * rendered; a caller that keeps it where only the product writes (the reconcile's state table) can hand it
 * back to a later render, in any process, which then reuses exactly those bytes without parsing and
 * verifying them again.
 */
export interface PkiProof {
  key: string;
  /** Earliest expiry among the leaf certificates, and among the CAs (ISO 8601). */
  notAfter: string;
  caNotAfter: string;
}

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
  /** A proof an earlier check left (PkiProof): it stands for the check when its key is that of `existing`. */
  proof?: PkiProof;
}

/**
 * Reuses every certificate and key that is still good and issues only what is missing, unreadable,
 * expiring within policy.renewBeforeDays, signed by a CA that changed, or whose names (subject, SANs,
 * usages) no longer match. Reuse is byte for byte, so a steady pool renders identical Secrets forever.
 */
export async function ensurePki(input: PkiInput): Promise<PkiResult> {
  const memoKey = memoKeyOf(input, input.existing);
  const memo = reuseMemo.get(memoKey);
  if (memo && input.now.getTime() < memo.renewAt) return memo.result;
  const proven = input.proof?.key === memoKey ? provenResult(input, input.proof) : undefined;
  if (proven) {
    remember(memoKey, proven, input.policy);
    return proven;
  }
  const result = await checkOrIssue(input);
  if (result.reused) remember(memoKey, result, input.policy);
  // What was just issued passes the reuse check by construction; the next reconcile reads it back from the
  // Secrets, so answer that question now instead of re-verifying fifteen artefacts then.
  else remember(memoKeyOf(input, result.files), { ...result, reused: true, reasons: [] }, input.policy);
  return result;
}

/** The reused result a proof of these very files stands for, unless its renewal point has been reached. */
function provenResult(input: PkiInput, proof: PkiProof): PkiResult | undefined {
  const notAfter = new Date(proof.notAfter);
  const caNotAfter = new Date(proof.caNotAfter);
  const renewAt = Math.min(notAfter.getTime(), caNotAfter.getTime()) - input.policy.renewBeforeDays * DAY_MS;
  if (!(input.now.getTime() < renewAt)) return undefined;
  const files: Record<string, string> = {};
  for (const name of readFiles(input.leaves)) {
    const text = input.existing[name];
    // The key covers every file the check reads, so a match means they are all there; this is belt and braces.
    if (text === undefined) return undefined;
    files[name] = text;
  }
  return { files, reused: true, reasons: [], notAfter, caNotAfter };
}

/** The proof of a result: what a later render may be handed instead of checking the same files again. */
export function pkiProofOf(input: Pick<PkiInput, 'pool' | 'leaves' | 'policy'>, result: PkiResult): PkiProof {
  return {
    key: pkiInputKey(input, result.files),
    notAfter: result.notAfter.toISOString(),
    caNotAfter: result.caNotAfter.toISOString(),
  };
}

/** Every file the check reads, by name. */
function readFiles(leaves: readonly LeafSpec[]): string[] {
  const ids = ['ca', 'etcd-ca', ...leaves.map((l) => l.id)] as const;
  return [...ids.flatMap((id) => [certFile(id), keyFile(id)]), PKI_FILES.saPrivate, PKI_FILES.saPublic];
}

/**
 * Only the files the check reads: the Secrets they are read back from also hold others (the client CA
 * bundle, the agent's kubeconfig), which must not make the material just issued look new again.
 */
function memoKeyOf(input: PkiInput, files: Record<string, string>): string {
  return pkiInputKey(input, files);
}

/**
 * A hash of what ensurePki's answer depends on besides the time: the pool, the leaves, the policy and the
 * files it reads of `files`. The files are fed to the hash as they are (a marker tells a missing one from an
 * empty one): a canonical JSON text of fifteen PEM files was most of what a steady pool's check cost.
 */
export function pkiInputKey(
  input: Pick<PkiInput, 'pool' | 'leaves' | 'policy'>,
  files: Record<string, string>,
): string {
  const hash = createHash('sha256').update(canonicalJson([input.pool, input.leaves, input.policy]));
  for (const name of readFiles(input.leaves)) fileIntoHash(hash, name, files[name]);
  return hash.digest('hex');
}

function fileIntoHash(hash: Hash, name: string, text: string | undefined): void {
  hash.update(`\0${name}\0`);
  hash.update(text === undefined ? '\u0001' : `\u0002${text.length}\0${text}`);
}

/**
 * Verifying seven certificates and eight keys still costs milliseconds (cert-check.ts), and a steady pool
 * asks the same question on every reconcile. A fully reused result depends only on the inputs and on `now`
 * staying before the first renewal point, so it is memoised (bounded, per process) until then.
 */
const reuseMemo = new Map<string, { result: PkiResult; renewAt: number }>();
const MEMO_LIMIT = 2000;

function remember(key: string, result: PkiResult, policy: PkiPolicy): void {
  const renewAt = Math.min(result.notAfter.getTime(), result.caNotAfter.getTime()) - policy.renewBeforeDays * DAY_MS;
  const oldest = reuseMemo.keys().next();
  if (reuseMemo.size >= MEMO_LIMIT && !oldest.done) reuseMemo.delete(oldest.value);
  reuseMemo.set(key, { result, renewAt });
}

async function checkOrIssue(input: PkiInput): Promise<PkiResult> {
  const { existing, now, keys, policy } = input;
  const reasons: string[] = [];
  const files: Record<string, string> = {};
  const cas = {} as Record<CaId, (Reusable & { renewed: false }) | (Issued & { renewed: true })>;

  for (const id of ['ca', 'etcd-ca'] as const) {
    const subject = caSubject(id, input.pool);
    const found = checkCertificate(existing[certFile(id)], existing[keyFile(id)], now, policy, { subject });
    if (typeof found !== 'string') {
      cas[id] = { ...found, renewed: false };
    } else {
      reasons.push(`${id}: ${found}`);
      const { issueCa } = await loadIssuer();
      cas[id] = { ...(await issueCa(id, subject, now, policy, keys)), renewed: true };
    }
    files[certFile(id)] = cas[id].certPem;
    files[keyFile(id)] = cas[id].keyPem;
  }

  let earliest = Infinity;
  for (const leaf of input.leaves) {
    const ca = cas[leaf.issuer];
    let found: Issued | string = ca.renewed
      ? `issuer ${leaf.issuer} was renewed`
      : checkCertificate(existing[certFile(leaf.id)], existing[keyFile(leaf.id)], now, policy, { leaf, ca: ca.cert });
    if (typeof found === 'string') {
      reasons.push(`${leaf.id}: ${found}`);
      const { issueLeaf } = await loadIssuer();
      found = await issueLeaf(leaf, ca, now, policy, keys);
    }
    files[certFile(leaf.id)] = found.certPem;
    files[keyFile(leaf.id)] = found.keyPem;
    earliest = Math.min(earliest, found.notAfter.getTime());
  }

  const sa = await serviceAccountKeys(existing, keys);
  if (sa.reason) reasons.push(`service-account key: ${sa.reason}`);
  files[PKI_FILES.saPrivate] = sa.privatePem;
  files[PKI_FILES.saPublic] = sa.publicPem;

  return {
    files,
    reused: reasons.length === 0,
    reasons,
    notAfter: new Date(earliest),
    caNotAfter: new Date(Math.min(cas.ca.notAfter.getTime(), cas['etcd-ca'].notAfter.getTime())),
  };
}

async function serviceAccountKeys(
  existing: Record<string, string>,
  keys: KeyFactory,
): Promise<{ privatePem: string; publicPem: string; reason?: string }> {
  const privatePem = existing[PKI_FILES.saPrivate];
  const publicPem = existing[PKI_FILES.saPublic];
  let reason = 'not present';
  if (privatePem && publicPem) {
    try {
      if (ecPublicKeyDer(readPrivateKey(privatePem)).equals(pemDecode(publicPem))) return { privatePem, publicPem };
      reason = 'public key does not match';
    } catch {
      reason = 'unreadable';
    }
  }
  const pair = keys.generateKeyObjects('service-account');
  return {
    privatePem: privateKeyPem(pair.privateKey),
    publicPem: publicKeyPem(pair.publicKey),
    reason,
  };
}
