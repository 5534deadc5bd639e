import { createPrivateKey, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PKI_POLICY, type KeyFactory, renderPoolSpirit, webCryptoKeyFactory } from '../../../core/index.ts';
import { canonicalIp, sameSubject, subjectAltNames } from '../../../core/render/cert-names.ts';
import { pemDecode, pemEncode } from '../../../core/render/pem.ts';
import { ensurePki, type PkiProof, type PkiResult, pkiInputKey, pkiProofOf } from '../../../core/render/pki.ts';
import { caSubject, type LeafSpec, type PkiPolicy } from '../../../core/render/pki-spec.ts';
import type { CryptoKeyPair } from '../../../core/render/webcrypto.ts';
import { functionBundles } from '../../support/function-bundles.ts';
import { DAY, keys, NOW, renderInput } from '../fixtures.ts';
import { cert, pkiOf, sans, secretData, x509 } from '../helpers.ts';

const LEAVES = ['apiserver', 'agent', 'etcd-server', 'etcd-peer', 'apiserver-etcd-client'];

describe('per-pool PKI', () => {
  it('gives the apiserver certificate loopback and every Service name, and the ClusterIP once known', async () => {
    const before = await renderPoolSpirit(await renderInput());
    expect(sans(pkiOf(before)['apiserver.crt'])).toEqual(
      [
        'dns:localhost',
        'dns:ps-hangzhou',
        'dns:ps-hangzhou.pool-spirit-system',
        'dns:ps-hangzhou.pool-spirit-system.svc',
        'dns:ps-hangzhou.pool-spirit-system.svc.cluster.local',
        'ip:127.0.0.1',
      ].sort(),
    );
    const after = await renderPoolSpirit(
      await renderInput({ existingPki: pkiOf(before), serviceClusterIP: '10.96.12.34' }),
    );
    expect(sans(pkiOf(after)['apiserver.crt'])).toContain('ip:10.96.12.34');
    expect(after.pki.reused).toBe(false);
    expect(after.pki.reasons).toEqual(['apiserver: SANs changed (+10.96.12.34)']);
    // only the apiserver certificate was reissued
    for (const file of ['ca.crt', 'etcd-server.crt', 'agent.crt', 'sa.key'])
      expect(pkiOf(after)[file]).toBe(pkiOf(before)[file]);
    expect(sans(pkiOf(after)['etcd-server.crt'])).toEqual(['dns:localhost', 'ip:127.0.0.1']);
  });

  it('uses ECDSA P-256 keys and SHA-256 signatures', async () => {
    const r = await renderPoolSpirit(await renderInput());
    const pki = pkiOf(r);
    for (const id of ['ca', 'etcd-ca', ...LEAVES]) {
      const c = cert(pki[`${id}.crt`]);
      expect(c.publicKey.algorithm).toMatchObject({ name: 'ECDSA', namedCurve: 'P-256' });
      expect(c.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-256' } });
      // The key is a PKCS#8 private key for the same P-256 curve as the certificate.
      expect(createPrivateKey(pki[`${id}.key`]).asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
    }
  });

  it('marks only the CAs as CAs, with the right key usages, and chains every leaf to its CA', async () => {
    const pki = pkiOf(await renderPoolSpirit(await renderInput()));
    for (const id of ['ca', 'etcd-ca']) {
      const c = cert(pki[`${id}.crt`]);
      const bc = c.getExtension(x509.BasicConstraintsExtension)!;
      expect(bc.ca).toBe(true);
      expect(bc.critical).toBe(true);
      const ku = c.getExtension(x509.KeyUsagesExtension)!.usages;
      expect(ku & x509.KeyUsageFlags.keyCertSign).toBeTruthy();
      expect(ku & x509.KeyUsageFlags.cRLSign).toBeTruthy();
    }
    const issuerOf: Record<string, string> = {
      apiserver: 'ca',
      agent: 'ca',
      'etcd-server': 'etcd-ca',
      'etcd-peer': 'etcd-ca',
      'apiserver-etcd-client': 'etcd-ca',
    };
    for (const id of LEAVES) {
      const c = cert(pki[`${id}.crt`]);
      expect(c.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(false);
      expect(c.getExtension(x509.KeyUsagesExtension)!.usages & x509.KeyUsageFlags.keyCertSign).toBe(0);
      const ca = cert(pki[`${issuerOf[id]}.crt`]);
      expect(await c.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
      expect(c.issuer).toBe(ca.subject);
    }
    const eku = (id: string) => cert(pki[`${id}.crt`]).getExtension(x509.ExtendedKeyUsageExtension)!.usages;
    expect(eku('apiserver')).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    expect(eku('agent')).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    expect(eku('apiserver-etcd-client')).toEqual([x509.ExtendedKeyUsage.clientAuth]);
  });

  it('issues CAs for 10 years and leaves for 1 year by default, and honours a policy', async () => {
    const pki = pkiOf(await renderPoolSpirit(await renderInput()));
    const years = (id: string) => (cert(pki[`${id}.crt`]).notAfter.getTime() - NOW.getTime()) / (365 * DAY);
    expect(years('ca')).toBeCloseTo(10, 1);
    expect(years('apiserver')).toBeCloseTo(1, 2);
    expect(cert(pki['apiserver.crt']).notBefore.getTime()).toBeLessThanOrEqual(NOW.getTime());
    const short = pkiOf(
      await renderPoolSpirit(await renderInput({ existingPki: undefined, pkiPolicy: { leafValidityDays: 90 } })),
    );
    expect((cert(short['agent.crt']).notAfter.getTime() - NOW.getTime()) / DAY).toBeCloseTo(90, 3);
  });

  it('gives the agent a dedicated identity and a loopback kubeconfig', async () => {
    const r = await renderPoolSpirit(await renderInput());
    const agent = secretData(r, 'ps-hangzhou-agent');
    expect(cert(agent['agent.crt']).subject).toBe('CN=poolspirit:agent, O=system:masters');
    expect(agent.kubeconfig).toContain('server: https://127.0.0.1:10270');
    expect(agent.kubeconfig).toContain('client-key-data:');
  });

  it('renews certificates within 30 days of expiry, keeping the CA', async () => {
    const first = await renderPoolSpirit(await renderInput());
    const later = new Date(NOW.getTime() + 340 * DAY); // leaves expire at +365 days
    const renewed = await renderPoolSpirit(await renderInput({ existingPki: pkiOf(first), now: later }));
    expect(renewed.pki.reused).toBe(false);
    expect(renewed.pki.reasons).toHaveLength(LEAVES.length);
    expect(renewed.pki.reasons[0]).toMatch(/within 30 days/);
    expect(pkiOf(renewed)['ca.crt']).toBe(pkiOf(first)['ca.crt']);
    expect(cert(pkiOf(renewed)['apiserver.crt']).notAfter.getTime()).toBeGreaterThan(later.getTime() + 300 * DAY);
    // Renewed leaves reach the running pod through its Secret volume: the pod must not roll (a restart
    // empties its in-memory etcd), so the restart hash in the pod template stays.
    expect(restartAnnotation(renewed)).toBe(restartAnnotation(first));
    const notYet = await renderPoolSpirit(
      await renderInput({ existingPki: pkiOf(first), now: new Date(NOW.getTime() + 300 * DAY) }),
    );
    expect(notYet.pki.reused).toBe(true);
  });

  it('rolls the pod for a new CA, which nothing running re-reads, but not for a renewed leaf', async () => {
    const first = pkiOf(await renderPoolSpirit(await renderInput()));
    const before = restartAnnotation(await renderPoolSpirit(await renderInput({ existingPki: first })));
    const leafRenewed = await renderPoolSpirit(
      await renderInput({ existingPki: { ...first, 'apiserver.crt': '', 'agent.crt': '', 'etcd-server.crt': '' } }),
    );
    expect(leafRenewed.pki.reused).toBe(false);
    expect(pkiOf(leafRenewed)['apiserver.crt']).not.toBe(first['apiserver.crt']);
    expect(restartAnnotation(leafRenewed)).toBe(before);
    const { 'etcd-ca.crt': _c, 'etcd-ca.key': _k, ...withoutEtcdCa } = first;
    const caRenewed = await renderPoolSpirit(await renderInput({ existingPki: withoutEtcdCa }));
    expect(restartAnnotation(caRenewed)).not.toBe(before);
  });

  it('reissues every leaf of a CA that changed, and repairs a key that does not match', async () => {
    const first = pkiOf(await renderPoolSpirit(await renderInput()));
    const other = pkiOf(
      await renderPoolSpirit(await renderInput({ existingPki: undefined, keys: webCryptoKeyFactory() })),
    );
    const swapped = await renderPoolSpirit(
      await renderInput({
        existingPki: { ...first, 'etcd-ca.crt': other['etcd-ca.crt'], 'etcd-ca.key': other['etcd-ca.key'] },
      }),
    );
    expect(swapped.pki.reasons.sort()).toEqual([
      'apiserver-etcd-client: not signed by the current CA',
      'etcd-peer: not signed by the current CA',
      'etcd-server: not signed by the current CA',
    ]);
    const mismatched = await renderPoolSpirit(
      await renderInput({ keys: webCryptoKeyFactory(), existingPki: { ...first, 'agent.key': other['agent.key'] } }),
    );
    expect(mismatched.pki.reasons).toEqual(['agent: key does not match the certificate']);
    const partial = await renderPoolSpirit(await renderInput({ existingPki: { 'ca.crt': first['ca.crt'] } }));
    expect(partial.pki.reasons).toContain('ca: not present');
  });
});

/** ensurePki on its own, with three leaves that cover both CAs, SANs of both kinds and both usages. */
const POOL = 'hangzhou';
const SPECS: LeafSpec[] = [
  {
    id: 'apiserver',
    issuer: 'ca',
    subject: 'CN=poolspirit-apiserver, O=pool-spirit',
    dns: ['localhost', 'ps-hangzhou'],
    ips: ['127.0.0.1', '::1', '2001:db8::a:0:1'],
    usages: ['serverAuth'],
  },
  {
    id: 'agent',
    issuer: 'ca',
    subject: 'CN=poolspirit:agent, O=system:masters',
    dns: [],
    ips: [],
    usages: ['clientAuth'],
  },
  {
    id: 'etcd-server',
    issuer: 'etcd-ca',
    subject: 'CN=poolspirit-etcd-server',
    dns: ['localhost'],
    ips: ['127.0.0.1'],
    usages: ['serverAuth', 'clientAuth'],
  },
];
const withLeaf = (id: string, change: Partial<LeafSpec>) => SPECS.map((l) => (l.id === id ? { ...l, ...change } : l));

function pki(
  existing: Record<string, string>,
  opts: {
    leaves?: LeafSpec[];
    now?: Date;
    keys?: KeyFactory;
    pool?: string;
    policy?: PkiPolicy;
    proof?: PkiProof;
  } = {},
): Promise<PkiResult> {
  return ensurePki({
    pool: opts.pool ?? POOL,
    leaves: opts.leaves ?? SPECS,
    existing,
    now: opts.now ?? NOW,
    keys: opts.keys ?? keys,
    policy: opts.policy ?? DEFAULT_PKI_POLICY,
    proof: opts.proof,
  });
}

async function keyPairPem(): Promise<{ pair: CryptoKeyPair; keyPem: string }> {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  return { pair, keyPem: pemEncode(await crypto.subtle.exportKey('pkcs8', pair.privateKey), 'PRIVATE KEY') };
}

describe('reuse check (node:crypto)', () => {
  let good: Record<string, string>;
  let other: Record<string, string>;
  beforeAll(async () => {
    good = (await pki({})).files;
    other = (await pki({}, { keys: webCryptoKeyFactory() })).files;
  });

  it('reuses steady material byte for byte, checked rather than remembered', async () => {
    // A policy that changes only what new certificates get makes the question new to its memo, so the
    // check itself answers.
    const r = await pki(good, { policy: { ...DEFAULT_PKI_POLICY, leafValidityDays: 366 } });
    expect(r.reasons).toEqual([]);
    expect(r.reused).toBe(true);
    expect(Object.keys(r.files).sort()).toEqual(Object.keys(good).sort());
    for (const [file, pem] of Object.entries(r.files)) expect(pem, file).toBe(good[file]);
    expect(r.notAfter).toEqual(new Date(NOW.getTime() + 365 * DAY));
    expect(r.caNotAfter).toEqual(new Date(NOW.getTime() + 3650 * DAY));
  });

  it('answers from its memo when the Secrets read back hold files the check does not read', async () => {
    const policy = { ...DEFAULT_PKI_POLICY, leafValidityDays: 367 };
    const checked = await pki({ ...good, 'client-ca.crt': 'bundle 1' }, { policy });
    expect(checked.reused).toBe(true);
    // The same answer, not a second check: another client CA bundle or kubeconfig is not PKI it verifies.
    expect(await pki({ ...good, 'client-ca.crt': 'bundle 2', kubeconfig: 'x' }, { policy })).toBe(checked);
    // What it does read still counts.
    expect(await pki({ ...good, 'agent.crt': other['agent.crt'] }, { policy })).not.toBe(checked);
  });

  it('takes a proof that names exactly these files for the check (its dates are what it answers)', async () => {
    const policy = { ...DEFAULT_PKI_POLICY, leafValidityDays: 368 };
    const proof: PkiProof = {
      key: pkiInputKey({ pool: POOL, leaves: SPECS, policy }, good),
      notAfter: new Date(NOW.getTime() + 200 * DAY).toISOString(),
      caNotAfter: new Date(NOW.getTime() + 3000 * DAY).toISOString(),
    };
    const r = await pki({ ...good, kubeconfig: 'not read by the check' }, { policy, proof });
    expect(r).toMatchObject({ reused: true, reasons: [] });
    expect(r.notAfter.toISOString()).toBe(proof.notAfter);
    for (const [file, pem] of Object.entries(r.files)) expect(pem, file).toBe(good[file]);
    // What a render hands out for it is the same proof.
    expect(pkiProofOf({ pool: POOL, leaves: SPECS, policy }, r)).toEqual(proof);
  });

  it('checks for itself when a proof names other files or has reached its renewal point', async () => {
    const policy = { ...DEFAULT_PKI_POLICY, leafValidityDays: 369 };
    const at = (days: number) => new Date(NOW.getTime() + days * DAY).toISOString();
    const ofOther = {
      key: pkiInputKey({ pool: POOL, leaves: SPECS, policy }, other),
      notAfter: at(200),
      caNotAfter: at(3000),
    };
    const checked = await pki(good, { policy, proof: ofOther });
    expect(checked.notAfter).toEqual(new Date(NOW.getTime() + 365 * DAY));
    const policy2 = { ...DEFAULT_PKI_POLICY, leafValidityDays: 370 };
    const lapsing = {
      key: pkiInputKey({ pool: POOL, leaves: SPECS, policy: policy2 }, good),
      notAfter: at(20),
      caNotAfter: at(3000),
    };
    const rechecked = await pki(good, { policy: policy2, proof: lapsing });
    expect(rechecked.notAfter).toEqual(new Date(NOW.getTime() + 365 * DAY));
  });

  it('names what is missing, unreadable or keyed wrongly', async () => {
    const { 'agent.key': _, ...noAgentKey } = good;
    expect((await pki(noAgentKey)).reasons).toEqual(['agent: not present']);
    expect((await pki({ ...good, 'etcd-server.crt': 'garbage' })).reasons).toEqual(['etcd-server: unreadable']);
    // The key's first base64 character replaced by one base64 does not have.
    const [header, body, ...rest] = good['agent.key'].split('\n');
    expect((await pki({ ...good, 'agent.key': [header, `!${body.slice(1)}`, ...rest].join('\n') })).reasons).toEqual([
      'agent: unreadable',
    ]);
    expect((await pki({ ...good, 'agent.key': good['apiserver.key'] })).reasons).toEqual([
      'agent: key does not match the certificate',
    ]);
    expect((await pki({ ...good, 'ca.key': other['ca.key'] })).reasons).toEqual([
      'ca: key does not match the certificate',
      'apiserver: issuer ca was renewed',
      'agent: issuer ca was renewed',
    ]);
  });

  it('renews within renewBeforeDays of notAfter, giving the date', async () => {
    const r = await pki(good, { now: new Date(NOW.getTime() + 336 * DAY) });
    expect(r.reasons).toEqual(SPECS.map((l) => `${l.id}: expires 2027-01-15T12:00:00.000Z, within 30 days`));
    expect(r.files['ca.crt']).toBe(good['ca.crt']);
    expect((await pki(good, { now: new Date(NOW.getTime() + 334 * DAY) })).reused).toBe(true);
  });

  it('re-issues a CA whose subject changed or that is not a CA', async () => {
    expect((await pki(good, { pool: 'shanghai' })).reasons.filter((r) => !r.includes('issuer'))).toEqual([
      'ca: subject changed',
      'etcd-ca: subject changed',
    ]);
    // Same subject and a matching key, but basicConstraints CA:false.
    const { pair, keyPem } = await keyPairPem();
    const notCa = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: caSubject('ca', POOL),
      keys: pair,
      notBefore: NOW,
      notAfter: new Date(NOW.getTime() + 3650 * DAY),
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
    });
    expect((await pki({ ...good, 'ca.crt': notCa.toString('pem'), 'ca.key': keyPem })).reasons[0]).toBe(
      'ca: not a CA certificate',
    );
  });

  it('re-issues a leaf not signed by the current CA, even under the same CA name', async () => {
    const r = await pki({
      ...good,
      'etcd-server.crt': other['etcd-server.crt'],
      'etcd-server.key': other['etcd-server.key'],
    });
    expect(r.reasons).toEqual(['etcd-server: not signed by the current CA']);
    expect(
      new X509Certificate(r.files['etcd-server.crt']).verify(new X509Certificate(good['etcd-ca.crt']).publicKey),
    ).toBe(true);
  });

  it('re-issues a leaf whose subject, SANs or usages changed', async () => {
    const changed = (await pki({}, { leaves: withLeaf('agent', { subject: 'CN=someone-else, O=system:masters' }) }))
      .files;
    expect(
      (await pki({ ...good, 'agent.crt': changed['agent.crt'], 'agent.key': changed['agent.key'] })).reasons,
    ).toEqual(['agent: subject changed']);
    const sans = withLeaf('apiserver', {
      dns: ['localhost', 'ps-shanghai'],
      ips: ['127.0.0.1', '::1', '2001:db8::a:0:2'],
    });
    expect((await pki(good, { leaves: sans })).reasons).toEqual([
      'apiserver: SANs changed (+ps-shanghai +2001:db8::a:0:2 -ps-hangzhou -2001:db8::a:0:1)',
    ]);
    expect((await pki(good, { leaves: withLeaf('agent', { dns: ['agent.local'] }) })).reasons).toEqual([
      'agent: SANs changed (+agent.local)',
    ]);
    expect((await pki(good, { leaves: withLeaf('etcd-server', { ips: [] }) })).reasons).toEqual([
      'etcd-server: SANs changed (-127.0.0.1)',
    ]);
    expect((await pki(good, { leaves: withLeaf('etcd-server', { usages: ['serverAuth'] }) })).reasons).toEqual([
      'etcd-server: usages changed',
    ]);
    expect((await pki(good, { leaves: withLeaf('agent', { usages: ['clientAuth', 'serverAuth'] }) })).reasons).toEqual([
      'agent: usages changed',
    ]);
  });

  it('compares IP SANs as addresses, however they are spelled', async () => {
    const spelled = withLeaf('apiserver', { ips: ['127.0.0.1', '0:0:0:0:0:0:0:1', '2001:DB8:0:0:0:A:0:1'] });
    expect((await pki(good, { leaves: spelled })).reasons).toEqual([]);
    // usage order does not matter either
    expect(
      (await pki(good, { leaves: withLeaf('etcd-server', { usages: ['clientAuth', 'serverAuth'] }) })).reused,
    ).toBe(true);
  });

  it('checks the service-account key pair', async () => {
    expect((await pki({ ...good, 'sa.pub': other['sa.pub'] })).reasons).toEqual([
      'service-account key: public key does not match',
    ]);
    expect((await pki({ ...good, 'sa.pub': 'not pem' })).reasons).toEqual(['service-account key: unreadable']);
    const { 'sa.key': _, ...noKey } = good;
    const r = await pki(noKey);
    expect(r.reasons).toEqual(['service-account key: not present']);
    expect(pemDecode(r.files['sa.pub']).length).toBeGreaterThan(0);
    expect((await pki(r.files)).reused).toBe(true);
  });
});

describe('certificate names as node:crypto prints them', () => {
  it('compares subjects as ordered attributes, failing safe on what it cannot read', () => {
    expect(
      sameSubject('CN=poolspirit-ca\nOU=hangzhou\nO=pool-spirit', 'CN=poolspirit-ca, OU=hangzhou, O=pool-spirit'),
    ).toBe(true);
    expect(sameSubject('CN=poolspirit:agent\nO=system:masters', 'CN=poolspirit:agent,O=system:masters')).toBe(true);
    expect(sameSubject('CN=a\\,b\nO=c', 'CN=a\\,b, O=c')).toBe(true);
    expect(sameSubject('CN=a\\2Cb', 'CN=a\\,b')).toBe(true);
    expect(sameSubject('O=pool-spirit\nCN=poolspirit-ca', 'CN=poolspirit-ca, O=pool-spirit')).toBe(false); // order
    expect(sameSubject('CN=poolspirit-ca', 'CN=poolspirit-ca, O=pool-spirit')).toBe(false);
    expect(sameSubject('CN=a + O=b', 'CN=a, O=b')).toBe(false); // multi-valued RDN
    expect(sameSubject('CN=a + O=b', 'CN=a + O=b')).toBe(false);
    expect(sameSubject('CN="a"', 'CN="a"')).toBe(false);
    expect(sameSubject('CN=a\\', 'CN=a\\')).toBe(false);
    expect(sameSubject(undefined, 'CN=a')).toBe(false);
    expect(sameSubject('', '')).toBe(false);
  });

  it('matches the subject node reads from certificates @peculiar/x509 writes, escapes included', async () => {
    const { pair } = await keyPairPem();
    for (const name of ['CN=poolspirit:agent, O=system:masters', 'CN=a\\,b, OU=x\\+y, O=semi\\;colon']) {
      const c = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: '01',
        name,
        keys: pair,
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      });
      expect(sameSubject(new X509Certificate(c.toString('pem')).subject, name), name).toBe(true);
    }
  });

  it('reads subjectAltName, canonicalising IPv4 and IPv6 addresses', () => {
    expect(
      subjectAltNames(
        'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:2001:DB8:0:0:0:A:0:1',
      ),
    ).toEqual(['dns:localhost', 'ip:127.0.0.1', 'ip:::1', 'ip:2001:db8::a:0:1']);
    expect(subjectAltNames('DNS:"a, b", DNS:c')).toEqual(['dns:a, b', 'dns:c']);
    expect(subjectAltNames('email:x@y')).toEqual(['email:x@y']);
    expect(subjectAltNames('DNS:"unterminated')).toEqual(['unreadable:DNS:"unterminated']);
    expect(subjectAltNames(undefined)).toEqual([]);
    expect(canonicalIp('0:0:0:0:0:ffff:102:304')).toBe('::ffff:1.2.3.4');
    expect(canonicalIp('10.96.12.34')).toBe('10.96.12.34');
    expect(canonicalIp('2001:0DB8::0001')).toBe('2001:db8::1');
    expect(canonicalIp('010.1.1.1')).toBeUndefined();
    expect(canonicalIp('localhost')).toBeUndefined();
  });
});

/**
 * The point of the node:crypto check: a reconcile that only reuses must not evaluate @peculiar/x509. The
 * check runs from a bundle built like the functions' (one ESM file), in a fresh Node: reflect-metadata,
 * which x509 loads first, defines Reflect.getMetadata, so its absence after the reuse shows x509 stayed
 * unevaluated; issuing afterwards must define it (the marker works and x509 is in the bundle).
 */
describe('the functions that issue carry no X.509 library, and load the issuer only to issue', () => {
  const bundles = functionBundles('ps-pki-bundle-');

  // Certificates are written as DER (core/render/der.ts); the library, its asn1js and its Reflect polyfill
  // (some 60 ms of a cold start) must not come back through some other import.
  it.each(['reconcile', 'audit'])(
    'the %s bundle holds none of @peculiar/*, asn1js, tsyringe, reflect-metadata',
    async (name) => {
      const bundle = await bundles.build(name);
      const inputs = Object.keys(bundle.metafile.inputs);
      expect(inputs.some((p) => p.startsWith('core/render/pki-issue.ts'))).toBe(true);
      // A steady pool never issues: the issuer (and its DER writer) is a chunk loaded on the first issue.
      const issuerImports = Object.values(bundle.metafile.inputs)
        .flatMap((input) => input.imports)
        .filter((i) => i.path === 'core/render/pki-issue.ts' || i.path === 'core/render/der.ts');
      expect(issuerImports.length).toBeGreaterThan(0);
      expect(issuerImports.filter((i) => i.kind !== 'dynamic-import' && i.path === 'core/render/pki-issue.ts')).toEqual(
        [],
      );
      expect(
        inputs.filter((p) => /node_modules\/(@peculiar\/|asn1js\/|tsyringe\/|reflect-metadata\/)/.test(p)),
      ).toEqual([]);
    },
  );
});

/** The Deployment's poolspirit.io/pki-hash: what changes exactly when the pod must restart. */
function restartAnnotation(r: { objects: Array<{ kind: string; spec?: unknown }> }): string | undefined {
  const spec = r.objects.find((o) => o.kind === 'Deployment')?.spec as
    | { template: { metadata: { annotations: Record<string, string> } } }
    | undefined;
  return spec?.template.metadata.annotations['poolspirit.io/pki-hash'];
}
