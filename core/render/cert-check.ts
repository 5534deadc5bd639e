/**
 * Whether an existing certificate and key can be kept, with node:crypto (OpenSSL) alone. This runs on
 * every reconcile of every pool, so it must not load @peculiar/x509 (with tsyringe and reflect-metadata, some
 * 60 ms of a bundled cold start); that is loaded only when something must be issued (pki-issue.ts).
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { canonicalIp, sameSubject, subjectAltNames } from './cert-names.ts';
import { pemDecode } from './pem.ts';
import { DAY_MS, type Issued, type LeafSpec, type PkiPolicy } from './pki-spec.ts';

/** Reusable material, with the parsed certificate (a reused CA checks its leaves with it). */
export interface Reusable extends Issued {
  cert: X509Certificate;
}

export type Expectation = { subject: string } | { leaf: LeafSpec; ca: X509Certificate };

export const EXTENDED_KEY_USAGE_OIDS: Record<LeafSpec['usages'][number], string> = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

/**
 * A PKCS#8 PEM private key that is ECDSA P-256, as KeyFactory generates (and as the issuing path imports
 * into WebCrypto to sign); throws otherwise.
 */
export function readPrivateKey(pem: string): KeyObject {
  const key = createPrivateKey({ key: pemDecode(pem), format: 'der', type: 'pkcs8' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('private key: expected ECDSA P-256');
  }
  return key;
}

/** The existing certificate and key if they can be kept, else the reason they cannot. */
export function checkCertificate(
  certPem: string | undefined,
  keyPem: string | undefined,
  now: Date,
  policy: PkiPolicy,
  expect: Expectation,
): Reusable | string {
  if (!certPem || !keyPem) return 'not present';
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = new X509Certificate(certPem);
    key = readPrivateKey(keyPem);
  } catch {
    return 'unreadable';
  }
  if (!cert.checkPrivateKey(key)) return 'key does not match the certificate';
  const notAfter = cert.validToDate ?? new Date(cert.validTo);
  if (Number.isNaN(notAfter.getTime())) return 'unreadable';
  if (notAfter.getTime() - now.getTime() <= policy.renewBeforeDays * DAY_MS) {
    return `expires ${notAfter.toISOString()}, within ${policy.renewBeforeDays} days`;
  }
  if ('subject' in expect) {
    if (!sameSubject(cert.subject, expect.subject)) return 'subject changed';
    if (!cert.ca) return 'not a CA certificate';
  } else {
    // checkIssued: the issuer name and key identifier chain to this CA; verify: its key signed the certificate.
    if (!cert.checkIssued(expect.ca) || !cert.verify(expect.ca.publicKey)) return 'not signed by the current CA';
    if (!sameSubject(cert.subject, expect.leaf.subject)) return 'subject changed';
    const sanDiff = diffSans(cert, expect.leaf);
    if (sanDiff) return `SANs changed (${sanDiff})`;
    const have = [...(cert.keyUsage ?? [])].sort().join(',');
    if (
      have !==
      expect.leaf.usages
        .map((u) => EXTENDED_KEY_USAGE_OIDS[u])
        .sort()
        .join(',')
    )
      return 'usages changed';
  }
  return { cert, certPem, keyPem, notAfter };
}

/** `+added -removed` names (IP addresses in canonical form), or undefined when the sets are equal. */
function diffSans(cert: X509Certificate, leaf: LeafSpec): string | undefined {
  const have = new Set(subjectAltNames(cert.subjectAltName));
  const want = new Set([...leaf.dns.map((d) => `dns:${d}`), ...leaf.ips.map((ip) => `ip:${canonicalIp(ip) ?? ip}`)]);
  const added = [...want].filter((n) => !have.has(n)).map((n) => `+${n.slice(n.indexOf(':') + 1)}`);
  const removed = [...have].filter((n) => !want.has(n)).map((n) => `-${n.slice(n.indexOf(':') + 1)}`);
  return added.length + removed.length > 0 ? [...added, ...removed].join(' ') : undefined;
}
