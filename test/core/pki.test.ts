import { createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renderPoolSpirit, webCryptoKeyFactory } from '../../core/index.ts';
import { DAY, NOW, renderInput } from './fixtures.ts';
import { cert, pkiOf, sans, secretData, x509 } from './helpers.ts';

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
    const after = await renderPoolSpirit(await renderInput({ existingPki: pkiOf(before), serviceClusterIP: '10.96.12.34' }));
    expect(sans(pkiOf(after)['apiserver.crt'])).toContain('ip:10.96.12.34');
    expect(after.pki.reused).toBe(false);
    expect(after.pki.reasons).toEqual(['apiserver: SANs changed (+10.96.12.34)']);
    // only the apiserver certificate was reissued
    for (const file of ['ca.crt', 'etcd-server.crt', 'agent.crt', 'sa.key']) expect(pkiOf(after)[file]).toBe(pkiOf(before)[file]);
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
    const issuerOf: Record<string, string> = { apiserver: 'ca', agent: 'ca', 'etcd-server': 'etcd-ca', 'etcd-peer': 'etcd-ca', 'apiserver-etcd-client': 'etcd-ca' };
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
    const short = pkiOf(await renderPoolSpirit(await renderInput({ existingPki: undefined, pkiPolicy: { leafValidityDays: 90 } })));
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
    // the pod rolls to pick them up
    const annotation = (r: typeof first) => (r.objects.find((o) => o.kind === 'Deployment')!.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations['poolspirit.io/pki-hash'];
    expect(annotation(renewed)).not.toBe(annotation(first));
    const notYet = await renderPoolSpirit(await renderInput({ existingPki: pkiOf(first), now: new Date(NOW.getTime() + 300 * DAY) }));
    expect(notYet.pki.reused).toBe(true);
  });

  it('reissues every leaf of a CA that changed, and repairs a key that does not match', async () => {
    const first = pkiOf(await renderPoolSpirit(await renderInput()));
    const other = pkiOf(await renderPoolSpirit(await renderInput({ existingPki: undefined, keys: webCryptoKeyFactory() })));
    const swapped = await renderPoolSpirit(await renderInput({ existingPki: { ...first, 'etcd-ca.crt': other['etcd-ca.crt'], 'etcd-ca.key': other['etcd-ca.key'] } }));
    expect(swapped.pki.reasons.sort()).toEqual(['apiserver-etcd-client: not signed by the current CA', 'etcd-peer: not signed by the current CA', 'etcd-server: not signed by the current CA']);
    const mismatched = await renderPoolSpirit(await renderInput({ keys: webCryptoKeyFactory(), existingPki: { ...first, 'agent.key': other['agent.key'] } }));
    expect(mismatched.pki.reasons).toEqual(['agent: key does not match the certificate']);
    const partial = await renderPoolSpirit(await renderInput({ existingPki: { 'ca.crt': first['ca.crt'] } }));
    expect(partial.pki.reasons).toContain('ca: not present');
  });
});
