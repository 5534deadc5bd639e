/**
 * The per-pool PKI checked from outside: node:crypto's X509Certificate (OpenSSL) reads what @peculiar/x509
 * issued, so a certificate that only our own library accepts would fail here. Keys are real (no key cache).
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  DEFAULT_PKI_POLICY,
  existingPkiFromSecrets,
  type RenderInput,
  type RenderResult,
  renderPoolSpirit,
  webCryptoKeyFactory,
} from '../../../core/index.ts';
import * as x509 from '../../../shared/x509.ts';
import { clusterCaPem, nodePool, spec } from '../fixtures.ts';

const NOW = new Date('2026-03-01T08:00:00Z');
const DAY = 86_400_000;
const BACKDATE_MS = 5 * 60_000;
const NS = 'pool-spirit-system';
const SERVICE = 'ps-hangzhou';
const SERVICE_NAMES = [SERVICE, `${SERVICE}.${NS}`, `${SERVICE}.${NS}.svc`, `${SERVICE}.${NS}.svc.cluster.local`];

/** The documented contract of every leaf (core/render/pki-spec.ts): issuer, usages and names. */
const LEAVES: Record<string, { issuer: 'ca' | 'etcd-ca'; usages: string[]; dns: string[]; ips: string[] }> = {
  apiserver: { issuer: 'ca', usages: ['serverAuth'], dns: ['localhost', ...SERVICE_NAMES], ips: ['127.0.0.1'] },
  agent: { issuer: 'ca', usages: ['clientAuth'], dns: [], ips: [] },
  'etcd-server': { issuer: 'etcd-ca', usages: ['serverAuth', 'clientAuth'], dns: ['localhost'], ips: ['127.0.0.1'] },
  'etcd-peer': { issuer: 'etcd-ca', usages: ['serverAuth', 'clientAuth'], dns: ['localhost'], ips: ['127.0.0.1'] },
  'apiserver-etcd-client': { issuer: 'etcd-ca', usages: ['clientAuth'], dns: [], ips: [] },
};
const EKU_OID: Record<string, string> = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' };
const keys = webCryptoKeyFactory();

async function input(over: Partial<RenderInput> = {}): Promise<RenderInput> {
  return {
    poolSpirit: { metadata: { name: 'hangzhou', uid: 'uid-ps' }, spec: spec() },
    nodePool: nodePool(),
    cluster: { caBundlePem: await clusterCaPem(), clusterDomain: 'cluster.local', namespace: NS },
    now: NOW,
    keys,
    ...over,
  };
}

const pkiOf = (r: RenderResult) =>
  existingPkiFromSecrets(
    r.objects.filter((o) => o.kind === 'Secret'),
    r.names,
  );
const sansOf = (pem: string) =>
  (new x509.X509Certificate(pem).getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON() ?? [])
    .map((n) => `${n.type}:${n.value}`)
    .sort();
const expectedSans = (leaf: (typeof LEAVES)[string], extraIps: string[] = []) =>
  [...leaf.dns.map((d) => `dns:${d}`), ...[...leaf.ips, ...extraIps].map((i) => `ip:${i}`)].sort();

describe('per-pool certificates (checked with OpenSSL through node:crypto)', () => {
  let pki: Record<string, string>;
  let rendered: RenderResult;

  beforeAll(async () => {
    rendered = await renderPoolSpirit(await input());
    pki = pkiOf(rendered);
  });

  it('uses ECDSA P-256 (or RSA ≥ 2048) keys and SHA-256 or stronger signatures everywhere', () => {
    for (const id of ['ca', 'etcd-ca', ...Object.keys(LEAVES)]) {
      const cert = new X509Certificate(pki[`${id}.crt`]);
      const details = cert.publicKey.asymmetricKeyDetails!;
      if (cert.publicKey.asymmetricKeyType === 'rsa') expect(details.modulusLength, id).toBeGreaterThanOrEqual(2048);
      else expect([cert.publicKey.asymmetricKeyType, details.namedCurve], id).toEqual(['ec', 'prime256v1']);
      const sig = new x509.X509Certificate(pki[`${id}.crt`]).signatureAlgorithm as {
        name: string;
        hash?: { name: string };
      };
      expect(['SHA-256', 'SHA-384', 'SHA-512'], `${id} signature hash`).toContain(sig.hash?.name);
      expect(['ECDSA', 'RSASSA-PKCS1-v1_5', 'RSA-PSS'], id).toContain(sig.name);
    }
    const sa = createPrivateKey(pki['sa.key']);
    expect([sa.asymmetricKeyType, sa.asymmetricKeyDetails?.namedCurve]).toEqual(['ec', 'prime256v1']);
  });

  it('marks the two CAs CA:true with keyCertSign, valid from now for the CA lifetime', () => {
    for (const id of ['ca', 'etcd-ca']) {
      const cert = new X509Certificate(pki[`${id}.crt`]);
      expect(cert.ca, id).toBe(true);
      expect(cert.checkIssued(cert), `${id} is self-signed`).toBe(true);
      expect(cert.verify(cert.publicKey), `${id} self-signature`).toBe(true);
      const ours = new x509.X509Certificate(pki[`${id}.crt`]);
      expect(ours.getExtension(x509.BasicConstraintsExtension)!.critical).toBe(true);
      expect(
        ours.getExtension(x509.KeyUsagesExtension)!.usages & x509.KeyUsageFlags.keyCertSign,
        `${id} keyCertSign`,
      ).toBeTruthy();
      expect(Date.parse(cert.validFrom)).toBeLessThanOrEqual(NOW.getTime());
      expect(Date.parse(cert.validFrom)).toBeGreaterThanOrEqual(NOW.getTime() - BACKDATE_MS - 1000);
      expect(Date.parse(cert.validTo)).toBe(NOW.getTime() + DEFAULT_PKI_POLICY.caValidityDays * DAY);
    }
    expect(new X509Certificate(pki['ca.crt']).subject).not.toBe(new X509Certificate(pki['etcd-ca.crt']).subject);
  });

  for (const [id, leaf] of Object.entries(LEAVES)) {
    it(`${id}: CA:false, ${leaf.usages.join('+')} only, exactly the documented SANs, chained to ${leaf.issuer}, key matches`, () => {
      const cert = new X509Certificate(pki[`${id}.crt`]);
      const ca = new X509Certificate(pki[`${leaf.issuer}.crt`]);
      const other = new X509Certificate(pki[`${leaf.issuer === 'ca' ? 'etcd-ca' : 'ca'}.crt`]);
      expect(cert.ca).toBe(false);
      expect([...(cert.keyUsage ?? [])].sort()).toEqual(leaf.usages.map((u) => EKU_OID[u]).sort());
      const ours = new x509.X509Certificate(pki[`${id}.crt`]);
      expect(ours.getExtension(x509.KeyUsagesExtension)!.usages & x509.KeyUsageFlags.keyCertSign).toBe(0);
      expect(sansOf(pki[`${id}.crt`])).toEqual(expectedSans(leaf));
      for (const dns of leaf.dns) expect(cert.checkHost(dns), `${id} serves ${dns}`).toBe(dns);
      for (const ip of leaf.ips) expect(cert.checkIP(ip), `${id} serves ${ip}`).toBe(ip);
      // Chained to its own CA, and only to it: the etcd CA separates etcd from everything else.
      expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
      expect(cert.verify(other.publicKey)).toBe(false);
      expect(cert.checkPrivateKey(createPrivateKey(pki[`${id}.key`]))).toBe(true);
      expect(Date.parse(cert.validFrom)).toBeLessThanOrEqual(NOW.getTime());
      expect(Date.parse(cert.validTo)).toBe(NOW.getTime() + DEFAULT_PKI_POLICY.leafValidityDays * DAY);
      expect(Date.parse(cert.validTo)).toBeLessThanOrEqual(Date.parse(ca.validTo));
      expect(BigInt(`0x${cert.serialNumber}`)).toBeGreaterThan(0n);
    });
  }

  it('pairs the service-account key halves and embeds the agent identity in its kubeconfig', () => {
    const pub = createPublicKey(createPrivateKey(pki['sa.key'])).export({ format: 'der', type: 'spki' });
    expect(Buffer.compare(pub, createPublicKey(pki['sa.pub']).export({ format: 'der', type: 'spki' }))).toBe(0);
    const kc = parseYaml(pki.kubeconfig);
    const user = kc.users[0].user;
    const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
    expect(b64(user['client-certificate-data'])).toBe(pki['agent.crt']);
    expect(b64(user['client-key-data'])).toBe(pki['agent.key']);
    expect(b64(kc.clusters[0].cluster['certificate-authority-data'])).toBe(pki['ca.crt']);
    expect(kc.clusters[0].cluster.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('never lets a leaf outlive its CA, even when the CA lifetime is the shorter one', async () => {
    const short = pkiOf(
      await renderPoolSpirit(
        await input({ pkiPolicy: { caValidityDays: 200, leafValidityDays: 365, renewBeforeDays: 30 } }),
      ),
    );
    for (const [id, leaf] of Object.entries(LEAVES)) {
      expect(Date.parse(new X509Certificate(short[`${id}.crt`]).validTo), id).toBe(
        Date.parse(new X509Certificate(short[`${leaf.issuer}.crt`]).validTo),
      );
    }
  });

  it('keeps everything while outside the renewal window', async () => {
    const later = await renderPoolSpirit(await input({ existingPki: pki, now: new Date(NOW.getTime() + 300 * DAY) }));
    expect(later.pki.reused).toBe(true);
    expect(pkiOf(later)).toEqual(pki);
  });

  it('re-issues the leaves within the renewal window, keeping the CAs and the service-account key', async () => {
    const at = new Date(
      NOW.getTime() + (DEFAULT_PKI_POLICY.leafValidityDays - DEFAULT_PKI_POLICY.renewBeforeDays + 1) * DAY,
    );
    const renewed = pkiOf(await renderPoolSpirit(await input({ existingPki: pki, now: at })));
    for (const id of Object.keys(LEAVES)) {
      const cert = new X509Certificate(renewed[`${id}.crt`]);
      expect(renewed[`${id}.crt`], id).not.toBe(pki[`${id}.crt`]);
      expect(Date.parse(cert.validTo)).toBe(at.getTime() + DEFAULT_PKI_POLICY.leafValidityDays * DAY);
      expect(cert.checkPrivateKey(createPrivateKey(renewed[`${id}.key`]))).toBe(true);
      expect(cert.verify(new X509Certificate(renewed[`${LEAVES[id].issuer}.crt`]).publicKey)).toBe(true);
    }
    for (const file of ['ca.crt', 'ca.key', 'etcd-ca.crt', 'sa.key', 'sa.pub'])
      expect(renewed[file], file).toBe(pki[file]);
  });

  it('re-issues a CA within its renewal window, and with it every leaf it signed', async () => {
    const at = new Date(
      NOW.getTime() + (DEFAULT_PKI_POLICY.caValidityDays - DEFAULT_PKI_POLICY.renewBeforeDays + 1) * DAY,
    );
    const r = await renderPoolSpirit(await input({ existingPki: pki, now: at }));
    const renewed = pkiOf(r);
    expect(r.pki.reasons).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ca: expires/), expect.stringMatching(/^etcd-ca: expires/)]),
    );
    for (const [id, leaf] of Object.entries(LEAVES)) {
      const cert = new X509Certificate(renewed[`${id}.crt`]);
      expect(cert.verify(new X509Certificate(renewed[`${leaf.issuer}.crt`]).publicKey), id).toBe(true);
      expect(
        cert.verify(new X509Certificate(pki[`${leaf.issuer}.crt`]).publicKey),
        `${id} no longer signed by the old CA`,
      ).toBe(false);
    }
  });

  it('re-issues the apiserver certificate (only it) when its SANs change: ClusterIP added, then changed', async () => {
    const withIp = pkiOf(await renderPoolSpirit(await input({ existingPki: pki, serviceClusterIP: '10.96.0.42' })));
    expect(sansOf(withIp['apiserver.crt'])).toEqual(expectedSans(LEAVES.apiserver, ['10.96.0.42']));
    expect(new X509Certificate(withIp['apiserver.crt']).checkIP('10.96.0.42')).toBe('10.96.0.42');
    for (const id of Object.keys(LEAVES).filter((l) => l !== 'apiserver'))
      expect(withIp[`${id}.crt`], id).toBe(pki[`${id}.crt`]);
    const moved = pkiOf(await renderPoolSpirit(await input({ existingPki: withIp, serviceClusterIP: '10.96.7.7' })));
    expect(sansOf(moved['apiserver.crt'])).toEqual(expectedSans(LEAVES.apiserver, ['10.96.7.7']));
    expect(new X509Certificate(moved['apiserver.crt']).checkIP('10.96.0.42')).toBeUndefined();
    expect(new X509Certificate(moved['apiserver.crt']).checkPrivateKey(createPrivateKey(moved['apiserver.key']))).toBe(
      true,
    );
  });

  it('replaces a certificate whose key does not match it', async () => {
    const swapped = { ...pki, 'etcd-peer.key': pki['etcd-server.key'] };
    const r = await renderPoolSpirit(await input({ existingPki: swapped }));
    expect(r.pki.reasons).toContain('etcd-peer: key does not match the certificate');
    const fixed = pkiOf(r);
    expect(new X509Certificate(fixed['etcd-peer.crt']).checkPrivateKey(createPrivateKey(fixed['etcd-peer.key']))).toBe(
      true,
    );
  });
});
