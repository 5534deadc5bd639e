/**
 * The openssl command-line tool judges every certificate and key the pool's PKI writes. Certificates are
 * written as DER by core/render/der.ts and pki-issue.ts (docs/decisions/0027-certificates-written-as-der.md),
 * keys by core/render/ec-key-der.ts (0031); the other tests read them back with node's X509Certificate and
 * @peculiar/x509, here `/usr/bin/openssl` (run as a child process, no shell) is the judge:
 *
 * - `openssl x509 -text` parses each certificate, and its own text must show the subject, issuer, validity,
 *   basic constraints, key usage, extended key usage, subject alternative names and key identifiers as
 *   issued (`asn1parse` shows the time and string types and the serial's INTEGER);
 * - `openssl verify -x509_strict` chains each leaf to its CA for the purposes its extended key usage names
 *   (and only those), to each of its SANs, and fails against any other CA, a CA of the same name with
 *   another key, and a copy with one byte of its signature or of its TBSCertificate flipped;
 * - `openssl pkey -check` holds each private key's point to the curve and to its scalar; the key is the
 *   certificate's, and openssl re-encodes it to the same bytes.
 *
 * Edge cases go through the project's own issuer: IPv6 SANs, a 253-character DNS name, UTF8String names,
 * keys whose x, y or d starts with a zero byte, validity on both sides of UTCTime's end (2049/2050) and in
 * 1999, a leaf capped at its CA's notAfter, serials whose INTEGER needs a leading zero. A last block shows
 * the judge fails a certificate with one wrong field, so passing means something.
 *
 * Keys are generated at run time and compared as SHA-256 hashes or booleans: no failure prints a key.
 */
import { execFile } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPoolSpirit } from '../../../core/index.ts';
import * as der from '../../../core/render/der.ts';
import { ecKeyDer } from '../../../core/render/ec-key-der.ts';
import { type KeyFactory, type KeyObjectPair, webCryptoKeyFactory } from '../../../core/render/keys.ts';
import { objectNames } from '../../../core/render/names.ts';
import { pemDecode, pemEncode } from '../../../core/render/pem.ts';
import { certFile, ensurePki, keyFile, PKI_FILES } from '../../../core/render/pki.ts';
import { serialFor } from '../../../core/render/pki-keys.ts';
import {
  type CaId,
  caSubject,
  DAY_MS,
  DEFAULT_PKI_POLICY,
  type LeafSpec,
  leafSpecs,
  type PkiPolicy,
} from '../../../core/render/pki-spec.ts';
import {
  COMPAT_LABEL,
  COORDINATOR_CLIENT_CA_SUBJECT,
  COORDINATOR_PKI_FILES,
  compatLeaves,
  compatSans,
  coordinatorClientLeaf,
  ETCD_CLIENT_CA_FILE,
  ensureCoordinatorPki,
} from '../../../core/yurt-coordinator/index.ts';
import { NOW, nodePool, renderInput } from '../fixtures.ts';
import { pkiOf } from '../helpers.ts';

const OPENSSL = '/usr/bin/openssl';
const execFileAsync = promisify(execFile);
/** What pki-issue.ts backdates notBefore by (clock skew between the reconciler and the nodes). */
const BACKDATE_MS = 5 * 60_000;
const NAMESPACE = 'pool-spirit-system';
const CLUSTER_DOMAIN = 'cluster.local';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
/** The DER of a PEM block; empty when there is none (a failed openssl run). */
const derOf = (pem: string) => {
  try {
    return pemDecode(pem);
  } catch {
    return Buffer.alloc(0);
  }
};
const wholeSeconds = (ms: number) => Math.floor(ms / 1000) * 1000;

// ---------------------------------------------------------------------------------------------------------
// Running openssl

interface Ran {
  ok: boolean;
  /** stdout. Never put into an assertion message for a key. */
  text: string;
  /** stdout and stderr together, for openssl's error lines. */
  all: string;
}

/** Two cores: a few openssl processes at a time. */
const PARALLEL = 3;
let running = 0;
const waiting: Array<() => void> = [];

async function openssl(...args: string[]): Promise<Ran> {
  if (running >= PARALLEL) await new Promise<void>((resume) => waiting.push(resume));
  else running++;
  try {
    const { stdout, stderr } = await execFileAsync(OPENSSL, args, { encoding: 'buffer', maxBuffer: 4 << 20 });
    const text = stdout.toString('utf8');
    return { ok: true, text, all: `${text}${stderr.toString('utf8')}` };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: Buffer; stderr?: Buffer };
    // No openssl at all (ENOENT) is not a verdict: fail loudly rather than judge nothing.
    if (typeof failed.code !== 'number') throw error;
    const text = failed.stdout?.toString('utf8') ?? '';
    return { ok: false, text, all: `${text}${failed.stderr ?? ''}` };
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

let root = '';
let dirs = 0;

/** A fresh directory under the test's 0700 temp dir, with the given files (keys 0600). */
async function workdir(files: Record<string, string>): Promise<string> {
  const dir = join(root, String(++dirs));
  await mkdir(dir, { mode: 0o700 });
  await Promise.all(Object.entries(files).map(([name, text]) => writeFile(join(dir, name), text, { mode: 0o600 })));
  return dir;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'pki-openssl-'));
  await chmod(root, 0o700);
  expect((await stat(root)).mode & 0o777).toBe(0o700);
  const version = await openssl('version');
  expect(version.ok, 'openssl version').toBe(true);
  expect(version.text).toMatch(/^OpenSSL [3-9]\./);
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------
// What openssl prints, and what it should print

/** `CN=a, O=b` (how the spec writes a name) as openssl's default one-line form: `CN = a, O = b`. */
const oneLine = (name: string) =>
  name
    .split(', ')
    .map((attribute) => attribute.replace('=', ' = '))
    .join(', ');
const attributeValues = (name: string) =>
  name.split(', ').map((attribute) => attribute.slice(attribute.indexOf('=') + 1));
/** X.520 PrintableString's characters: any other value must be a UTF8String. */
const printable = (value: string) => /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(value);

/** IPv6 SANs as openssl 3 prints them (eight groups, upper case, no `::`), written out rather than computed. */
const OPENSSL_IPV6: Record<string, string> = {
  '::1': '0:0:0:0:0:0:0:1',
  'fd00::1': 'FD00:0:0:0:0:0:0:1',
  '::ffff:1.2.3.4': '0:0:0:0:0:FFFF:102:304',
  '2001:db8::a:0:1': '2001:DB8:0:0:0:A:0:1',
  'fe80:0:0:0:0:0:0:ffff': 'FE80:0:0:0:0:0:0:FFFF',
};

function opensslSans(leaf: LeafSpec): string[] {
  return [
    ...leaf.dns.map((name) => `DNS:${name}`),
    ...leaf.ips.map((ip) => {
      if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return `IP Address:${ip}`;
      const printed = OPENSSL_IPV6[ip];
      if (!printed) throw new Error(`test: add ${ip} to OPENSSL_IPV6`);
      return `IP Address:${printed}`;
    }),
  ];
}

const EKU_TEXT = { serverAuth: 'TLS Web Server Authentication', clientAuth: 'TLS Web Client Authentication' };
const PURPOSE = { serverAuth: 'sslserver', clientAuth: 'sslclient' } as const;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Jan 15 12:00:00 2026 GMT` → epoch ms (NaN if not that form). */
function opensslDate(text: string | undefined): number {
  const m = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4}) GMT$/.exec(text?.trim() ?? '');
  if (!m) return Number.NaN;
  const [, month = '', day, hour, minute, second, year] = m;
  return Date.UTC(Number(year), MONTHS.indexOf(month), Number(day), Number(hour), Number(minute), Number(second));
}

/** RFC 5280 4.1.2.5 as asn1parse shows it: UTCTime (YYMMDDHHMMSSZ) through 2049, GeneralizedTime from 2050. */
function asn1Time(ms: number): string {
  const date = new Date(ms);
  const digits = `${date.toISOString().slice(0, 19).replace(/[-T:]/g, '')}Z`;
  return date.getUTCFullYear() < 2050 ? `UTCTIME:${digits.slice(2)}` : `GENERALIZEDTIME:${digits}`;
}

interface Extension {
  critical: boolean;
  value: string;
}

/** The `X509v3 extensions:` block of `openssl x509 -text`: name → criticality and value lines. */
function extensionsOf(text: string): Map<string, Extension> {
  const out = new Map<string, Extension>();
  const start = text.indexOf('        X509v3 extensions:\n');
  if (start < 0) return out;
  let current: Extension | undefined;
  for (const line of text.slice(start).split('\n').slice(1)) {
    const header = /^ {12}(\S.*?):( critical)?\s*$/.exec(line);
    const value = /^ {16}(\S.*)$/.exec(line);
    if (header?.[1]) {
      current = { critical: header[2] !== undefined, value: '' };
      out.set(header[1], current);
    } else if (value?.[1] && current) {
      current.value = current.value ? `${current.value}\n${value[1]}` : value[1];
    } else break;
  }
  return out;
}

const field = (text: string, pattern: RegExp) => pattern.exec(text)?.[1]?.trim();
/** A key identifier as openssl prints it (3.0 has no `keyid:` prefix; 1.1 had). */
const keyId = (value: string | undefined) => value?.replace(/^keyid:/, '').trim();
/** SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2 method 1), from the SPKI openssl printed. */
const sha1KeyId = (spki: Buffer) =>
  (
    createHash('sha1')
      .update(spki.subarray(spki.length - 65))
      .digest('hex')
      .toUpperCase()
      .match(/../g) ?? []
  ).join(':');

// ---------------------------------------------------------------------------------------------------------
// The judge

interface CertExpectation {
  /** Label in messages; serialFor's id. */
  id: string;
  path: string;
  subject: string;
  issuerSubject: string;
  /** Undefined for a CA. */
  leaf?: LeafSpec;
  notBefore: number;
  notAfter: number;
  /** When it was issued (the serial is derived from it). */
  now: Date;
  /** The issuing CA's subject key identifier, as openssl printed it (leaves). */
  issuerKeyId?: string;
  /** The serial as written, when it is not serialFor's (hex, upper case). */
  serial?: string;
}

interface CertVerdict {
  failures: string[];
  keyId?: string;
  /** `openssl x509 -pubkey` output (PEM). */
  publicKeyPem: string;
}

/** Every field of one certificate, from openssl's text of it. */
async function judgeCertificate(want: CertExpectation): Promise<CertVerdict> {
  const failures: string[] = [];
  const label = want.id;
  const same = (what: string, got: unknown, expected: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(expected))
      failures.push(`${label}: ${what} ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
  };
  // One run prints the text, then `serial=…`, then the public key (PEM).
  const [parsed, asn1] = await Promise.all([
    openssl('x509', '-in', want.path, '-noout', '-text', '-serial', '-pubkey'),
    openssl('asn1parse', '-in', want.path),
  ]);
  if (!parsed.ok || !asn1.ok) {
    failures.push(`${label}: openssl cannot parse it: ${parsed.all}${asn1.all}`);
    return { failures, publicKeyPem: '' };
  }
  const text = parsed.text;
  same('version', field(text, /^ {8}Version: (.*)$/m), '3 (0x2)');
  same(
    'signature algorithms',
    [...text.matchAll(/Signature Algorithm: (\S+)/g)].map((m) => m[1]),
    ['ecdsa-with-SHA256', 'ecdsa-with-SHA256'],
  );
  same('subject', field(text, /^ {8}Subject: (.*)$/m), oneLine(want.subject));
  same('issuer', field(text, /^ {8}Issuer: (.*)$/m), oneLine(want.issuerSubject));
  same(
    'notBefore',
    new Date(opensslDate(field(text, /Not Before: (.*)$/m))).toISOString(),
    new Date(want.notBefore).toISOString(),
  );
  same(
    'notAfter',
    new Date(opensslDate(field(text, /Not After : (.*)$/m))).toISOString(),
    new Date(want.notAfter).toISOString(),
  );
  same('public key algorithm', field(text, /Public Key Algorithm: (.*)$/m), 'id-ecPublicKey');
  same('curve', [field(text, /ASN1 OID: (.*)$/m), field(text, /NIST CURVE: (.*)$/m)], ['prime256v1', 'P-256']);

  // The DER types: UTCTime/GeneralizedTime as RFC 5280 has it, PrintableString/UTF8String by the value.
  same(
    'validity (asn1parse)',
    [...asn1.text.matchAll(/prim: (UTCTIME|GENERALIZEDTIME)\s*:(\S+)/g)].map((m) => `${m[1]}:${m[2]}`),
    [asn1Time(want.notBefore), asn1Time(want.notAfter)],
  );
  same(
    'name strings (asn1parse: issuer, then subject)',
    [...asn1.text.matchAll(/prim: (PRINTABLESTRING|UTF8STRING|IA5STRING|T61STRING|BMPSTRING)\s*:(.*)$/gm)].map(
      (m) => `${m[1]}:${m[2]}`,
    ),
    [...attributeValues(want.issuerSubject), ...attributeValues(want.subject)].map(
      (v) => `${printable(v) ? 'PRINTABLESTRING' : 'UTF8STRING'}:${v}`,
    ),
  );

  // The serial: serialFor's of the key in the certificate (or the one written), one minimal positive INTEGER.
  const publicKeyPem = /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----\n/.exec(parsed.text)?.[0] ?? '';
  const spki = publicKeyPem ? pemDecode(publicKeyPem) : Buffer.alloc(0);
  const serial = field(parsed.text, /^serial=([0-9A-F]+)$/m) ?? '';
  const expectedSerial = want.serial ?? serialFor(want.id, want.now, spki).toUpperCase();
  same('serial', serial, expectedSerial);
  if (want.serial === undefined && !/^[1357][0-9A-F]{31}$/.test(serial))
    failures.push(`${label}: serial ${serial} is not 128 bits with the high bit clear`);
  const integer = /^\s*\d+:d=2\s+hl=\d+\s+l=\s*(\d+)\s+prim: INTEGER\s*:([0-9A-F]+)$/m.exec(asn1.text);
  const highBit = parseInt(expectedSerial.slice(0, 1), 16) >= 8;
  same(
    'serial INTEGER (asn1parse: length, value)',
    [Number(integer?.[1]), integer?.[2]],
    [expectedSerial.length / 2 + (highBit ? 1 : 0), expectedSerial],
  );
  same('public key (SPKI bytes, point form)', [spki.length, spki[spki.length - 65]], [91, 4]);

  // Extensions: exactly these, critical where RFC 5280 says so, with the values as issued.
  const extensions = extensionsOf(text);
  const names = want.leaf
    ? [
        'X509v3 Basic Constraints',
        'X509v3 Key Usage',
        'X509v3 Extended Key Usage',
        'X509v3 Authority Key Identifier',
        'X509v3 Subject Key Identifier',
        ...(want.leaf.dns.length + want.leaf.ips.length > 0 ? ['X509v3 Subject Alternative Name'] : []),
      ]
    : ['X509v3 Basic Constraints', 'X509v3 Key Usage', 'X509v3 Subject Key Identifier'];
  same('extensions', [...extensions.keys()].sort(), [...names].sort());
  const ext = (name: string) => extensions.get(`X509v3 ${name}`);
  same('basicConstraints', ext('Basic Constraints'), {
    critical: true,
    value: want.leaf ? 'CA:FALSE' : 'CA:TRUE, pathlen:0',
  });
  same('keyUsage', ext('Key Usage'), {
    critical: true,
    value: want.leaf ? 'Digital Signature' : 'Digital Signature, Certificate Sign, CRL Sign',
  });
  const subjectKeyId = keyId(ext('Subject Key Identifier')?.value);
  same('subjectKeyIdentifier (SHA-1 of the key)', subjectKeyId, sha1KeyId(spki));
  same('subjectKeyIdentifier critical', ext('Subject Key Identifier')?.critical, false);
  if (want.leaf) {
    same('extendedKeyUsage', ext('Extended Key Usage'), {
      critical: false,
      value: want.leaf.usages.map((u) => EKU_TEXT[u]).join(', '),
    });
    const aki = ext('Authority Key Identifier');
    same(
      'authorityKeyIdentifier (the CA key identifier)',
      [keyId(aki?.value), aki?.critical],
      [want.issuerKeyId, false],
    );
    if (want.leaf.dns.length + want.leaf.ips.length > 0) {
      const san = ext('Subject Alternative Name');
      same('subjectAltName', [san?.value.split(', '), san?.critical], [opensslSans(want.leaf), false]);
    }
  }
  return { failures, keyId: subjectKeyId, publicKeyPem };
}

/** A copy of a certificate with one byte flipped at `offset` (PEM, written next to it). */
async function flipped(path: string, certPem: string, offset: number, suffix: string): Promise<string> {
  const bytes = Buffer.from(pemDecode(certPem));
  bytes.writeUInt8((bytes[offset] ?? 0) ^ 0x01, offset);
  const out = `${path}.${suffix}`;
  await writeFile(out, pemEncode(bytes, 'CERTIFICATE'), { mode: 0o600 });
  return out;
}

interface ChainCase {
  id: string;
  path: string;
  pem: string;
  caPath: string;
  /** Undefined for a CA (checked as self-signed). */
  leaf?: LeafSpec;
  now: Date;
  /** CA certificates this one must not verify against. */
  wrongCas: string[];
  /** Also each SAN, a name and an address it does not carry, and copies with a byte flipped. */
  thorough: boolean;
}

/** `openssl verify` as a TLS peer would run it, at the time of issue, and the negative controls. */
async function judgeChain(c: ChainCase): Promise<string[]> {
  const failures: string[] = [];
  const at = String(Math.floor(c.now.getTime() / 1000) + 60);
  const verify = (ca: string, cert: string, ...extra: string[]) =>
    openssl('verify', '-x509_strict', '-attime', at, ...extra, '-CAfile', ca, cert);
  const expectVerdict = async (what: string, ran: Promise<Ran>, ok: boolean, error?: RegExp) => {
    const r = await ran;
    if (r.ok !== ok) failures.push(`${c.id}: ${what} ${r.ok ? 'verified' : `failed: ${r.all.trim()}`}`);
    else if (!ok && error && !error.test(r.all)) failures.push(`${c.id}: ${what} failed otherwise: ${r.all.trim()}`);
  };
  // One byte flipped: the signature's last (s's low byte: still DER), and the TBSCertificate's last (the
  // last extension's value: still DER), so openssl parses the copy and must refuse its signature.
  const certDer = pemDecode(c.pem);
  const [tbs] = der.childrenOf(certDer, der.readElement(certDer, 0));
  const flips = c.thorough
    ? await Promise.all([
        flipped(c.path, c.pem, certDer.length - 1, 'flipped-signature'),
        flipped(c.path, c.pem, (tbs?.end ?? 0) - 1, 'flipped-tbs'),
      ])
    : [];

  if (!c.leaf) {
    await expectVerdict('self-signed CA', verify(c.caPath, c.path, '-check_ss_sig'), true);
    for (const bad of flips)
      await expectVerdict(
        `CA ${bad.slice(bad.lastIndexOf('.') + 1)}`,
        verify(bad, bad, '-check_ss_sig'),
        false,
        /error 7 at/,
      );
    return failures;
  }
  const leaf = c.leaf;
  for (const usage of ['serverAuth', 'clientAuth'] as const) {
    await expectVerdict(
      `chain to its CA with -purpose ${PURPOSE[usage]}`,
      verify(c.caPath, c.path, '-purpose', PURPOSE[usage]),
      leaf.usages.includes(usage),
      /error 26 at 0 depth/, // unsuitable certificate purpose
    );
  }
  if (!c.thorough) return failures;
  for (const name of leaf.dns)
    await expectVerdict(
      `-verify_hostname ${name.slice(0, 40)}`,
      verify(c.caPath, c.path, '-verify_hostname', name),
      true,
    );
  for (const ip of leaf.ips) await expectVerdict(`-verify_ip ${ip}`, verify(c.caPath, c.path, '-verify_ip', ip), true);
  await expectVerdict(
    'a name it does not carry',
    verify(c.caPath, c.path, '-verify_hostname', 'not-a-san.example'),
    false,
    /error 62 at 0 depth/, // hostname mismatch
  );
  await expectVerdict(
    'an address it does not carry',
    verify(c.caPath, c.path, '-verify_ip', '192.0.2.1'),
    false,
    /error 64 at 0 depth/,
  );
  for (const [i, wrong] of c.wrongCas.entries())
    await expectVerdict(`chain to another CA (${i})`, verify(wrong, c.path), false, /error (20|7) at 0 depth/);
  for (const bad of flips)
    await expectVerdict(
      `chain of a copy ${bad.slice(bad.lastIndexOf('.') + 1)}`,
      verify(c.caPath, bad),
      false,
      /error 7 at 0 depth/,
    );
  return failures;
}

/**
 * A private key: openssl reads it, its point is on P-256 and is the scalar's, openssl writes it back to the
 * same bytes, and its public key is `publicKeyPem` (the certificate's). Only booleans leave this function.
 */
async function judgeKey(id: string, path: string, pem: string, publicKeyPem: string): Promise<string[]> {
  const failures: string[] = [];
  const [check, ec, reencoded] = await Promise.all([
    // -check: the scalar in range, the point on the curve and the scalar's (EC_KEY_check_key); then the public key.
    openssl('pkey', '-in', path, '-check', '-pubout'),
    openssl('ec', '-in', path, '-noout', '-text'),
    // PEM: openssl 3.0's `pkey -outform DER` writes the traditional SEC1 form, its PEM is PKCS#8.
    openssl('pkey', '-in', path),
  ]);
  const pub = /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----\n/.exec(check.text)?.[0] ?? '';
  if (!check.ok || !/^Key is valid$/m.test(check.text)) failures.push(`${id}: openssl pkey -check fails`);
  if (!ec.ok) failures.push(`${id}: openssl ec cannot read it`);
  if (!/^Private-Key: \(256 bit/m.test(ec.text)) failures.push(`${id}: not a 256-bit private key`);
  if (!/^ASN1 OID: prime256v1$/m.test(ec.text)) failures.push(`${id}: curve is not named prime256v1`);
  if (!/^NIST CURVE: P-256$/m.test(ec.text)) failures.push(`${id}: curve is not P-256`);
  if (!reencoded.ok || sha256(derOf(reencoded.text)) !== sha256(derOf(pem)))
    failures.push(`${id}: openssl re-encodes the key to other bytes`);
  if (!pub || !publicKeyPem || sha256(pub) !== sha256(publicKeyPem))
    failures.push(`${id}: the key's public key is not the certificate's`);
  return failures;
}

/** sa.pub: openssl reads it, its point is valid, it is written as openssl writes it, and it is sa.key's. */
async function judgeServiceAccount(dir: string, files: Record<string, string>): Promise<string[]> {
  const pubPath = join(dir, PKI_FILES.saPublic);
  const [text, pubcheck, reencoded, fromKey] = await Promise.all([
    openssl('pkey', '-pubin', '-in', pubPath, '-noout', '-text'),
    openssl('pkey', '-pubin', '-in', pubPath, '-pubcheck', '-noout'),
    openssl('pkey', '-pubin', '-in', pubPath, '-pubout'),
    openssl('pkey', '-in', join(dir, PKI_FILES.saPrivate), '-pubout'),
  ]);
  const failures: string[] = [];
  if (!text.ok || !/^ASN1 OID: prime256v1$/m.test(text.text)) failures.push('sa.pub: not a prime256v1 public key');
  if (!pubcheck.ok || !/^Key is valid$/m.test(pubcheck.text)) failures.push('sa.pub: openssl pkey -pubcheck fails');
  if (!reencoded.ok || sha256(derOf(reencoded.text)) !== sha256(derOf(files[PKI_FILES.saPublic] ?? '')))
    failures.push('sa.pub: openssl re-encodes it to other bytes');
  const publicPem = fromKey.ok ? fromKey.text : '';
  if (!publicPem || sha256(publicPem) !== sha256(reencoded.text))
    failures.push('sa.pub: not the public half of sa.key');
  failures.push(
    ...(await judgeKey('sa.key', join(dir, PKI_FILES.saPrivate), files[PKI_FILES.saPrivate] ?? '', publicPem)),
  );
  return failures;
}

interface PoolCase {
  files: Record<string, string>;
  cas: Array<{ id: CaId; subject: string }>;
  leaves: LeafSpec[];
  now: Date;
  policy: PkiPolicy;
  /** Other CA certificates (PEM) no leaf may verify against: same-named CAs with other keys, foreign CAs. */
  strangers?: string[];
  /** Whether the files include the service-account pair. */
  serviceAccount?: boolean;
  /** Each SAN verified, and the negative controls (judgeChain); the edge cases of validity and keys skip them. */
  thorough: boolean;
}

/** Every certificate and key of one issued PKI; returns the failures and which files were judged. */
async function judgePool(pool: PoolCase): Promise<{ failures: string[]; judged: string[]; dir: string }> {
  const dir = await workdir(pool.files);
  const strangerPaths = await Promise.all(
    (pool.strangers ?? []).map(async (pem, i) => {
      const path = join(dir, `stranger-${i}.crt`);
      await writeFile(path, pem, { mode: 0o600 });
      return path;
    }),
  );
  const notBefore = wholeSeconds(pool.now.getTime() - BACKDATE_MS);
  const caNotAfter = wholeSeconds(pool.now.getTime() + pool.policy.caValidityDays * DAY_MS);
  const judged: string[] = [];
  const pemOf = (name: string) => {
    judged.push(name);
    const pem = pool.files[name];
    if (pem === undefined) throw new Error(`the PKI has no ${name}`);
    return pem;
  };

  const caKeyIds = new Map<CaId, string | undefined>();
  const failures = (
    await Promise.all(
      pool.cas.map(async ({ id, subject }) => {
        const path = join(dir, certFile(id));
        const pem = pemOf(certFile(id));
        const verdict = await judgeCertificate({
          id,
          path,
          subject,
          issuerSubject: subject,
          notBefore,
          notAfter: caNotAfter,
          now: pool.now,
        });
        caKeyIds.set(id, verdict.keyId);
        const chain = await judgeChain({
          id,
          path,
          pem,
          caPath: path,
          now: pool.now,
          wrongCas: [],
          thorough: pool.thorough,
        });
        const key = await judgeKey(keyFile(id), join(dir, keyFile(id)), pemOf(keyFile(id)), verdict.publicKeyPem);
        return [...verdict.failures, ...chain, ...key];
      }),
    )
  ).flat();

  const leafFailures = await Promise.all(
    pool.leaves.map(async (leaf) => {
      const ca = pool.cas.find((c) => c.id === leaf.issuer);
      if (!ca) return [`${leaf.id}: issuer ${leaf.issuer} is not in the case`];
      const path = join(dir, certFile(leaf.id));
      const pem = pemOf(certFile(leaf.id));
      const caPath = join(dir, certFile(ca.id));
      const verdict = await judgeCertificate({
        id: leaf.id,
        path,
        subject: leaf.subject,
        issuerSubject: ca.subject,
        leaf,
        notBefore,
        notAfter: wholeSeconds(Math.min(pool.now.getTime() + pool.policy.leafValidityDays * DAY_MS, caNotAfter)),
        now: pool.now,
        issuerKeyId: caKeyIds.get(ca.id),
      });
      const wrongCas = [
        ...pool.cas.filter((c) => c.id !== ca.id).map((c) => join(dir, certFile(c.id))),
        ...strangerPaths,
      ];
      const chain = await judgeChain({
        id: leaf.id,
        path,
        pem,
        caPath,
        leaf,
        now: pool.now,
        wrongCas,
        thorough: pool.thorough,
      });
      const key = await judgeKey(
        keyFile(leaf.id),
        join(dir, keyFile(leaf.id)),
        pemOf(keyFile(leaf.id)),
        verdict.publicKeyPem,
      );
      return [...verdict.failures, ...chain, ...key];
    }),
  );
  failures.push(...leafFailures.flat());
  if (pool.serviceAccount !== false) {
    pemOf(PKI_FILES.saPublic);
    pemOf(PKI_FILES.saPrivate);
    failures.push(...(await judgeServiceAccount(dir, pool.files)));
  }
  return { failures, judged: judged.sort(), dir };
}

// ---------------------------------------------------------------------------------------------------------
// Issuing, through the project's own functions

const POOL = 'hangzhou';
const poolCas = (pool: string) => (['ca', 'etcd-ca'] as const).map((id) => ({ id, subject: caSubject(id, pool) }));
const poolLeaves = (clusterIP?: string) => leafSpecs(objectNames(POOL), NAMESPACE, CLUSTER_DOMAIN, clusterIP);

function issuePool(opts: { leaves: LeafSpec[]; now?: Date; keys?: KeyFactory; policy?: PkiPolicy }) {
  return ensurePki({
    pool: POOL,
    leaves: opts.leaves,
    existing: {},
    now: opts.now ?? NOW,
    keys: opts.keys ?? webCryptoKeyFactory(),
    policy: opts.policy ?? DEFAULT_PKI_POLICY,
  });
}

/** Only the files the PKI writes (not the cluster's client CA bundle, the kubeconfig or a compat pool's CA bundle). */
const written = (files: Record<string, string>) =>
  Object.keys(files)
    .filter((f) => /\.(crt|key|pub)$/.test(f) && f !== 'client-ca.crt' && f !== ETCD_CLIENT_CA_FILE)
    .sort();

const fieldBytes = (pair: KeyObjectPair, name: 'x' | 'y' | 'd') => {
  const raw = Buffer.from(pair.privateKey.export({ format: 'jwk' })[name] ?? '', 'base64url');
  return Buffer.concat([Buffer.alloc(32 - raw.length), raw]);
};

/** A fresh P-256 pair meeting `wanted` (bounded, as test/core/render/ec-key-der.test.ts does). */
function keyWhere(what: string, wanted: (pair: KeyObjectPair) => boolean): KeyObjectPair {
  for (let i = 0; i < 20_000; i++) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    if (wanted(pair)) return pair;
  }
  throw new Error(`no key with ${what} in 20000 tries`);
}

/** Hands out the given pairs by purpose (certificate id, or service-account), fresh ones otherwise. */
function chosenKeys(chosen: Record<string, KeyObjectPair>): KeyFactory {
  const fresh = webCryptoKeyFactory();
  return { ...fresh, generateKeyObjects: (purpose) => chosen[purpose] ?? fresh.generateKeyObjects(purpose) };
}

/** A certificate with its TBSCertificate edited and signed again by `caKey` (with ./der.ts's reader and writer). */
function resigned(certPem: string, caKey: KeyObject, edit: (fields: Buffer[]) => Buffer[]): string {
  const certDer = pemDecode(certPem);
  const [tbs, algorithm] = der.childrenOf(certDer, der.readElement(certDer, 0));
  if (!tbs || !algorithm) throw new Error('not a certificate');
  const fields = der.childrenOf(certDer, tbs).map((e) => certDer.subarray(e.start, e.end));
  const newTbs = der.sequence(...edit(fields));
  const signature = sign('sha256', newTbs, { key: caKey, dsaEncoding: 'der' });
  const algorithmDer = certDer.subarray(algorithm.start, algorithm.end);
  return pemEncode(der.sequence(newTbs, algorithmDer, der.bitString(signature)), 'CERTIFICATE');
}

/** TBSCertificate fields: [0] version, serial, signature, issuer, validity, subject, SPKI, [3] extensions. */
const TBS = { serial: 1, validity: 4, extensions: 7 } as const;

/** The extensions field with the extension `oid` replaced (by a whole Extension) or removed. */
function withExtension(fields: Buffer[], oid: string, replacement: Buffer | undefined): Buffer[] {
  const wrapper = fields[TBS.extensions] ?? Buffer.alloc(0);
  const [list] = der.childrenOf(wrapper, der.readElement(wrapper, 0));
  if (!list) throw new Error('no extensions');
  const oidDer = der.oid(oid);
  const extensions = der.childrenOf(wrapper, list).flatMap((e) => {
    const whole = wrapper.subarray(e.start, e.end);
    const [id] = der.childrenOf(wrapper, e);
    const matches = id && wrapper.subarray(id.start, id.end).equals(oidDer);
    return matches ? (replacement ? [replacement] : []) : [whole];
  });
  const out = [...fields];
  out[TBS.extensions] = der.explicit(3, der.sequence(...extensions));
  return out;
}

const extension = (oid: string, critical: boolean, value: Buffer) =>
  der.sequence(der.oid(oid), ...(critical ? [der.boolean(true)] : []), der.octetString(value));

// ---------------------------------------------------------------------------------------------------------

/** The pool CA of a freshly issued pool in `dir`, judged as issued at NOW with the default policy. */
function judgePoolCa(dir: string) {
  return judgeCertificate({
    id: 'ca',
    path: join(dir, certFile('ca')),
    subject: caSubject('ca', POOL),
    issuerSubject: caSubject('ca', POOL),
    notBefore: wholeSeconds(NOW.getTime() - BACKDATE_MS),
    notAfter: wholeSeconds(NOW.getTime() + DEFAULT_PKI_POLICY.caValidityDays * DAY_MS),
    now: NOW,
  });
}

describe('openssl judges every certificate and key a pool writes', () => {
  it('a freshly rendered pool: two CAs, five leaves, eight keys, the service-account pair', async () => {
    const input = { existingPki: undefined, keys: webCryptoKeyFactory(), serviceClusterIP: '10.96.0.10' };
    const files = pkiOf(await renderPoolSpirit(await renderInput(input)));
    // The same pool issued again: CAs of the same names with other keys, which no leaf may verify against.
    const again = pkiOf(await renderPoolSpirit(await renderInput({ ...input, keys: webCryptoKeyFactory() })));
    const { failures, judged } = await judgePool({
      files,
      cas: poolCas(POOL),
      leaves: poolLeaves('10.96.0.10'),
      now: NOW,
      policy: DEFAULT_PKI_POLICY,
      strangers: [again[PKI_FILES.caCert] ?? '', again[PKI_FILES.etcdCaCert] ?? ''],
      thorough: true,
    });
    expect(failures).toEqual([]);
    expect(judged).toEqual(written(files));
    expect(judged.filter((f) => f.endsWith('.crt'))).toHaveLength(7);
    expect(judged.filter((f) => f.endsWith('.key'))).toHaveLength(8);
  });

  it("a yurt-coordinator compat pool (the etcd proxy's leaf, the Service SANs) and the cluster's coordinator client PKI", async () => {
    const coordinator = await ensureCoordinatorPki({}, NOW, webCryptoKeyFactory(), DEFAULT_PKI_POLICY);
    const compat = {
      clientCaPem: coordinator.files[COORDINATOR_PKI_FILES.caCert],
      apiServerServiceIP: '10.96.0.40',
      etcdServiceIP: '10.96.0.41',
    };
    const compatPool = nodePool(POOL, {
      metadata: { name: POOL, uid: 'uid-np-hangzhou', labels: { [COMPAT_LABEL]: 'compat' } },
    });
    const files = pkiOf(
      await renderPoolSpirit(
        await renderInput({
          existingPki: undefined,
          keys: webCryptoKeyFactory(),
          nodePool: compatPool,
          yurtCoordinator: compat,
        }),
      ),
    );
    const leaves = leafSpecs(
      objectNames(POOL),
      NAMESPACE,
      CLUSTER_DOMAIN,
      undefined,
      compatSans(compat, CLUSTER_DOMAIN),
    ).concat(compatLeaves(compat, CLUSTER_DOMAIN));
    const pool = await judgePool({
      files,
      cas: poolCas(POOL),
      leaves,
      now: NOW,
      policy: DEFAULT_PKI_POLICY,
      strangers: [compat.clientCaPem],
      thorough: true,
    });
    expect(pool.failures).toEqual([]);
    expect(pool.judged).toEqual(written(files));
    expect(pool.judged).toContain('yurt-coordinator-etcd-proxy.crt');

    const cluster = await judgePool({
      files: coordinator.files,
      cas: [{ id: 'yurt-coordinator-client-ca', subject: COORDINATOR_CLIENT_CA_SUBJECT }],
      leaves: [coordinatorClientLeaf],
      now: NOW,
      policy: DEFAULT_PKI_POLICY,
      strangers: [files[PKI_FILES.caCert] ?? '', files[PKI_FILES.etcdCaCert] ?? ''],
      serviceAccount: false,
      thorough: true,
    });
    expect(cluster.failures).toEqual([]);
    expect(cluster.judged).toEqual(Object.keys(coordinator.files).sort());

    // The bundles the pool trusts client certificates by: the hubs' shared certificate verifies against the
    // apiserver's client CA bundle and the etcd proxy's, an etcd-CA client against the proxy's.
    const dir = await workdir({ ...files, ...coordinator.files });
    const at = String(Math.floor(NOW.getTime() / 1000) + 60);
    const client = (bundle: string, cert: string) =>
      openssl(
        'verify',
        '-x509_strict',
        '-attime',
        at,
        '-purpose',
        'sslclient',
        '-CAfile',
        join(dir, bundle),
        join(dir, cert),
      );
    expect((await client('client-ca.crt', COORDINATOR_PKI_FILES.clientCert)).ok).toBe(true);
    expect((await client(ETCD_CLIENT_CA_FILE, COORDINATOR_PKI_FILES.clientCert)).ok).toBe(true);
    expect((await client(ETCD_CLIENT_CA_FILE, certFile('apiserver-etcd-client'))).ok).toBe(true);
    expect((await client(ETCD_CLIENT_CA_FILE, certFile('agent'))).ok).toBe(false);
  });
});

describe('openssl judges the edge cases, issued by the project', () => {
  it('IPv6 and IPv4-mapped SANs, a 253-character DNS name of 63-character labels, UTF8String names', async () => {
    const long = ['a', 'b', 'c']
      .map((c) => `${c.repeat(62)}1`)
      .concat(`${'d'.repeat(60)}4`)
      .join('.');
    expect(long).toHaveLength(253);
    expect(long.split('.').map((l) => l.length)).toEqual([63, 63, 63, 61]);
    const base = poolLeaves();
    const leaves = base.map((leaf): LeafSpec => {
      if (leaf.id === 'apiserver')
        return {
          ...leaf,
          dns: ['localhost', long, `${'x'.repeat(63)}.example`],
          ips: ['127.0.0.1', 'fd00::1', '::1', '::ffff:1.2.3.4', '2001:db8::a:0:1', 'fe80:0:0:0:0:0:0:ffff'],
        };
      // '_' and '@' are not PrintableString characters: the name is written as UTF8String.
      if (leaf.id === 'etcd-peer') return { ...leaf, subject: 'CN=edge_case@etcd-peer, OU=a_b, O=pool-spirit' };
      if (leaf.id === 'etcd-server') return { ...leaf, dns: [], ips: ['::1'] };
      return leaf;
    });
    const pki = await issuePool({ leaves });
    const { failures, judged, dir } = await judgePool({
      files: pki.files,
      cas: poolCas(POOL),
      leaves,
      now: NOW,
      policy: DEFAULT_PKI_POLICY,
      thorough: true,
    });
    expect(failures).toEqual([]);
    expect(judged).toEqual(written(pki.files));
    // The SAN extension of the long name is over 255 bytes: a two-octet DER length.
    const text = (await openssl('x509', '-in', join(dir, certFile('apiserver')), '-noout', '-ext', 'subjectAltName'))
      .text;
    expect(text).toContain(`DNS:${long},`);
    expect(text).toContain('IP Address:FD00:0:0:0:0:0:0:1, IP Address:0:0:0:0:0:0:0:1');
  });

  it('keys whose x, y or d starts with a zero byte, or whose x, y and d all have the high bit set', async () => {
    const zero = (name: 'x' | 'y' | 'd') => (pair: KeyObjectPair) => fieldBytes(pair, name)[0] === 0;
    const high = (pair: KeyObjectPair) =>
      (['x', 'y', 'd'] as const).every((n) => (fieldBytes(pair, n)[0] ?? 0) >= 0x80);
    const chosen: Record<string, KeyObjectPair> = {
      ca: keyWhere('x starting 00', zero('x')),
      'etcd-ca': keyWhere('y starting 00', zero('y')),
      'service-account': keyWhere('d starting 00', zero('d')),
      apiserver: keyWhere('x starting 00', zero('x')),
      agent: keyWhere('y starting 00', zero('y')),
      'etcd-server': keyWhere('d starting 00', zero('d')),
      'etcd-peer': keyWhere('x, y and d starting >= 80', high),
    };
    const leaves = poolLeaves('10.96.0.10');
    const pki = await issuePool({ leaves, keys: chosenKeys(chosen) });
    // The chosen keys are the ones written (compared as keys, not printed).
    const used = Object.entries(chosen).map(([purpose, pair]) => {
      const file = purpose === 'service-account' ? PKI_FILES.saPrivate : `${purpose}.key`;
      return [purpose, createPrivateKey(pki.files[file] ?? '').equals(pair.privateKey)];
    });
    expect(used).toEqual(Object.keys(chosen).map((purpose) => [purpose, true]));
    const { failures } = await judgePool({
      files: pki.files,
      cas: poolCas(POOL),
      leaves,
      now: NOW,
      policy: DEFAULT_PKI_POLICY,
      thorough: false,
    });
    expect(failures).toEqual([]);
  });

  const validity: Array<[string, Date, Partial<PkiPolicy>, RegExp]> = [
    [
      'notAfter past 2049 (GeneralizedTime) for CA and leaves, notBefore in UTCTime, issued at a fraction of a second',
      new Date('2026-01-15T12:00:00.750Z'),
      { caValidityDays: 40 * 365, leafValidityDays: 30 * 365 },
      /GENERALIZEDTIME\s*:20560108120000Z/,
    ],
    [
      "leaves' notAfter on UTCTime's last second, 2049-12-31T23:59:59Z",
      new Date(Date.UTC(2049, 11, 31, 23, 59, 59) - 100 * DAY_MS),
      { leafValidityDays: 100 },
      /UTCTIME\s*:491231235959Z/,
    ],
    [
      "leaves' notAfter on GeneralizedTime's first second, 2050-01-01T00:00:00Z",
      new Date(Date.UTC(2050, 0, 1) - 100 * DAY_MS),
      { leafValidityDays: 100 },
      /GENERALIZEDTIME\s*:20500101000000Z/,
    ],
    [
      'notBefore in 1999 (UTCTime 99 is 1999, not 2099)',
      new Date('1999-12-31T23:58:00Z'),
      {},
      /UTCTIME\s*:991231235300Z/,
    ],
    [
      'a leaf whose validity the CA caps (CA 30 days, leaf 365)',
      NOW,
      { caValidityDays: 30, leafValidityDays: 365 },
      /UTCTIME\s*:260214120000Z/,
    ],
  ];
  it.each(validity)('%s', async (_name, now, policyChange, inAsn1) => {
    const policy = { ...DEFAULT_PKI_POLICY, renewBeforeDays: 1, ...policyChange };
    const leaves = poolLeaves().filter((l) => l.id === 'apiserver');
    const pki = await issuePool({ leaves, now, policy });
    const { failures, dir } = await judgePool({
      files: pki.files,
      cas: poolCas(POOL).filter((c) => c.id === 'ca'),
      leaves,
      now,
      policy,
      serviceAccount: false,
      thorough: false,
    });
    expect(failures).toEqual([]);
    const asn1 = await openssl('asn1parse', '-in', join(dir, certFile('apiserver')));
    expect(asn1.text).toMatch(inAsn1);
  });

  it('serials whose INTEGER needs a leading zero octet, or has leading zero octets to drop (der.unsignedInteger)', async () => {
    // serialFor never sets the high bit (the judge holds every issued serial to 1, 3, 5 or 7 first), so the
    // leading-zero path of the INTEGER writer is driven by re-serialising a real leaf with chosen serials.
    const leaves = poolLeaves().filter((l) => l.id === 'apiserver');
    const pki = await issuePool({ leaves });
    const caKey = createPrivateKey(pki.files[PKI_FILES.caKey] ?? '');
    const highBit = (() => {
      for (let i = 0; i < 100; i++) {
        const bytes = randomBytes(16);
        if ((bytes[0] ?? 0) >= 0x80) return bytes;
      }
      throw new Error('no random serial with the high bit set in 100 tries');
    })();
    const serials: Array<[magnitude: Buffer, printed: string]> = [
      [highBit, highBit.toString('hex').toUpperCase()],
      [Buffer.alloc(16, 0xff), 'FF'.repeat(16)],
      [Buffer.from('00007f0102', 'hex'), '7F0102'],
      [Buffer.from('0080', 'hex'), '80'],
      [Buffer.from('01', 'hex'), '01'],
    ];
    const files: Record<string, string> = { ...pki.files };
    const cases = serials.map(([magnitude, printed], i) => {
      const id = `serial-${i}`;
      files[`${id}.crt`] = resigned(pki.files[certFile('apiserver')] ?? '', caKey, (fields) => {
        const out = [...fields];
        out[TBS.serial] = der.unsignedInteger(magnitude);
        return out;
      });
      return { id, printed };
    });
    const dir = await workdir(files);
    const ca = await judgePoolCa(dir);
    const leaf = leaves[0] as LeafSpec;
    const verdicts = await Promise.all(
      cases.map(async ({ id, printed }) => {
        const path = join(dir, `${id}.crt`);
        const verdict = await judgeCertificate({
          id: 'apiserver',
          path,
          subject: leaf.subject,
          issuerSubject: caSubject('ca', POOL),
          leaf,
          notBefore: wholeSeconds(NOW.getTime() - BACKDATE_MS),
          notAfter: wholeSeconds(NOW.getTime() + DEFAULT_PKI_POLICY.leafValidityDays * DAY_MS),
          now: NOW,
          issuerKeyId: ca.keyId,
          serial: printed,
        });
        const chain = await judgeChain({
          id,
          path,
          pem: files[`${id}.crt`] ?? '',
          caPath: join(dir, certFile('ca')),
          leaf,
          now: NOW,
          wrongCas: [join(dir, certFile('etcd-ca'))],
          thorough: false,
        });
        return [...verdict.failures.map((f) => `${id}: ${f}`), ...chain];
      }),
    );
    expect([...ca.failures, ...verdicts.flat()]).toEqual([]);
  });
});

describe('the judge fails a certificate or key that is wrong in one thing', () => {
  let files: Record<string, string>;
  let dir: string;
  let caKeyId: string | undefined;
  const leaves = poolLeaves().filter((l) => ['apiserver', 'agent'].includes(l.id));
  const apiserver = leaves[0] as LeafSpec;
  beforeAll(async () => {
    files = (await issuePool({ leaves })).files;
    dir = await workdir(files);
    caKeyId = (await judgePoolCa(dir)).keyId;
  });

  const KU = '2.5.29.15';
  const mutations: Array<[string, (fields: Buffer[]) => Buffer[], RegExp]> = [
    [
      'keyCertSign set on a leaf',
      (f) => withExtension(f, KU, extension(KU, true, der.namedBits([0, 5]))),
      /apiserver: keyUsage .*Certificate Sign/,
    ],
    [
      'keyUsage not critical',
      (f) => withExtension(f, KU, extension(KU, false, der.namedBits([0]))),
      /apiserver: keyUsage \{"critical":false/,
    ],
    [
      'basicConstraints CA:TRUE on a leaf',
      (f) => withExtension(f, '2.5.29.19', extension('2.5.29.19', true, der.sequence(der.boolean(true)))),
      /apiserver: basicConstraints .*CA:TRUE/,
    ],
    [
      'clientAuth instead of serverAuth',
      (f) => withExtension(f, '2.5.29.37', extension('2.5.29.37', false, der.sequence(der.oid('1.3.6.1.5.5.7.3.2')))),
      /apiserver: extendedKeyUsage/,
    ],
    [
      'a SAN missing (the last IP)',
      (f) =>
        withExtension(
          f,
          '2.5.29.17',
          extension(
            '2.5.29.17',
            false,
            der.sequence(...apiserver.dns.map((d) => der.implicitPrimitive(2, Buffer.from(d, 'ascii')))),
          ),
        ),
      /apiserver: subjectAltName/,
    ],
    [
      'an authority key identifier that is not the CA key identifier',
      (f) =>
        withExtension(
          f,
          '2.5.29.35',
          extension('2.5.29.35', false, der.sequence(der.implicitPrimitive(0, Buffer.alloc(20, 7)))),
        ),
      /apiserver: authorityKeyIdentifier/,
    ],
    ['no subjectKeyIdentifier', (f) => withExtension(f, '2.5.29.14', undefined), /apiserver: extensions/],
    [
      'another serial',
      (f) => {
        const out = [...f];
        out[TBS.serial] = der.unsignedInteger(Buffer.from('1234', 'hex'));
        return out;
      },
      /apiserver: serial "1234"/,
    ],
    [
      'notAfter one second later, in GeneralizedTime',
      (f) => {
        const out = [...f];
        const after = new Date(NOW.getTime() + DEFAULT_PKI_POLICY.leafValidityDays * DAY_MS + 1000);
        const generalized = der.tlv(0x18, Buffer.from(`${after.toISOString().slice(0, 19).replace(/[-T:]/g, '')}Z`));
        out[TBS.validity] = der.sequence(der.time(new Date(NOW.getTime() - BACKDATE_MS)), generalized);
        return out;
      },
      /apiserver: notAfter[\s\S]*apiserver: validity \(asn1parse\)/,
    ],
  ];
  it.each(mutations)('%s', async (name, edit, expected) => {
    const pem = resigned(files[certFile('apiserver')] ?? '', createPrivateKey(files[PKI_FILES.caKey] ?? ''), edit);
    const path = join(dir, `mutated-${mutations.findIndex((m) => m[0] === name)}.crt`);
    await writeFile(path, pem, { mode: 0o600 });
    const verdict = await judgeCertificate({
      id: 'apiserver',
      path,
      subject: apiserver.subject,
      issuerSubject: caSubject('ca', POOL),
      leaf: apiserver,
      notBefore: wholeSeconds(NOW.getTime() - BACKDATE_MS),
      notAfter: wholeSeconds(NOW.getTime() + DEFAULT_PKI_POLICY.leafValidityDays * DAY_MS),
      now: NOW,
      issuerKeyId: caKeyId,
    });
    expect(verdict.failures.join('\n')).toMatch(expected);
  });

  it('a leaf re-signed by the CA still verifies, so the field checks above are what failed it', async () => {
    const pem = resigned(files[certFile('apiserver')] ?? '', createPrivateKey(files[PKI_FILES.caKey] ?? ''), (f) => f);
    const path = join(dir, 'resigned.crt');
    await writeFile(path, pem, { mode: 0o600 });
    const chain = await judgeChain({
      id: 'resigned',
      path,
      pem,
      caPath: join(dir, certFile('ca')),
      leaf: apiserver,
      now: NOW,
      wrongCas: [join(dir, certFile('etcd-ca'))],
      thorough: true,
    });
    expect(chain).toEqual([]);
    // …while the chain judge fails a leaf under the wrong CA and for a purpose it does not name.
    const wrong = await judgeChain({
      id: 'apiserver',
      path,
      pem,
      caPath: join(dir, certFile('etcd-ca')),
      leaf: { ...apiserver, usages: ['serverAuth', 'clientAuth'] },
      now: NOW,
      wrongCas: [join(dir, certFile('ca'))],
      thorough: true,
    });
    expect(wrong.join('\n')).toMatch(/chain to its CA with -purpose sslserver failed/);
    expect(wrong.join('\n')).toMatch(/chain to another CA \(0\) verified/);
  });

  it('a key whose public point is another key’s, or off the curve, fails; so does a certificate of another key', async () => {
    const mine = ecKeyDer(createPrivateKey(files[keyFile('apiserver')] ?? ''));
    const other = ecKeyDer(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    // PKCS#8 of ours: 36 header bytes, d (32), the public key's 6-byte header, then 04 || x || y.
    const swapped = Buffer.concat([mine.pkcs8.subarray(0, 74), other.pkcs8.subarray(74)]);
    const offCurve = Buffer.from(mine.pkcs8);
    offCurve.writeUInt8((offCurve[137] ?? 0) ^ 0x01, 137);
    const keys = {
      'swapped.key': pemEncode(swapped, 'PRIVATE KEY'),
      'off-curve.key': pemEncode(offCurve, 'PRIVATE KEY'),
    };
    const keyDir = await workdir(keys);
    const publicKeyPem = (await openssl('x509', '-in', join(dir, certFile('apiserver')), '-noout', '-pubkey')).text;
    const swappedVerdict = await judgeKey('swapped', join(keyDir, 'swapped.key'), keys['swapped.key'], publicKeyPem);
    expect(swappedVerdict).toContain('swapped: openssl pkey -check fails');
    expect(swappedVerdict).toContain("swapped: the key's public key is not the certificate's");
    const offCurveVerdict = await judgeKey(
      'off-curve',
      join(keyDir, 'off-curve.key'),
      keys['off-curve.key'],
      publicKeyPem,
    );
    expect(offCurveVerdict).toContain('off-curve: openssl pkey -check fails');
    // The apiserver's own key, held to the agent's certificate.
    const agentPublicKey = (await openssl('x509', '-in', join(dir, certFile('agent')), '-noout', '-pubkey')).text;
    expect(
      await judgeKey('apiserver', join(dir, keyFile('apiserver')), files[keyFile('apiserver')] ?? '', agentPublicKey),
    ).toEqual(["apiserver: the key's public key is not the certificate's"]);
  });
});
