import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkCertificate } from '../../../core/render/cert-check.ts';
import * as der from '../../../core/render/der.ts';
import { pemEncode } from '../../../core/render/pem.ts';
import { ipAddressBytes, issueCa, issueLeaf } from '../../../core/render/pki-issue.ts';
import { DEFAULT_PKI_POLICY, type LeafSpec } from '../../../core/render/pki-spec.ts';
import { keys, NOW } from '../fixtures.ts';
import { x509 } from '../helpers.ts';

const hex = (b: Buffer) => b.toString('hex');

describe('DER encodings (X.690), against known bytes', () => {
  it('writes INTEGERs minimally, adding a sign octet only when the high bit is set', () => {
    expect(hex(der.unsignedInteger(Buffer.from([0x00, 0x00, 0x7f])))).toBe('02017f');
    expect(hex(der.unsignedInteger(Buffer.from([0x80])))).toBe('02020080');
    expect(hex(der.unsignedInteger(Buffer.from([0x00])))).toBe('020100');
    expect(hex(der.smallInteger(2))).toBe('020102');
  });

  it('writes OIDs in base 128, the first two arcs folded', () => {
    expect(hex(der.oid('1.2.840.10045.4.3.2'))).toBe('06082a8648ce3d040302');
    expect(hex(der.oid('2.5.29.17'))).toBe('0603551d11');
    expect(() => der.oid('1')).toThrow(/OID/);
  });

  it('writes named bits without trailing zero bits, counting them', () => {
    expect(hex(der.namedBits([0]))).toBe('03020780'); // digitalSignature
    expect(hex(der.namedBits([0, 5, 6]))).toBe('03020186'); // digitalSignature, keyCertSign, cRLSign
    expect(hex(der.namedBits([8]))).toBe('0303070080');
  });

  it('writes long lengths in the long form', () => {
    const el = der.octetString(Buffer.alloc(200));
    expect(hex(el.subarray(0, 3))).toBe('0481c8');
    expect(hex(der.octetString(Buffer.alloc(300)).subarray(0, 4))).toBe('0482012c');
    expect(der.readElement(el, 0)).toEqual({ tag: 0x04, start: 0, contentStart: 3, end: 203 });
  });

  it('writes UTCTime through 2049 and GeneralizedTime from 2050, in whole seconds', () => {
    expect(der.time(new Date('2049-12-31T23:59:59.999Z')).toString('latin1')).toBe('\x17\x0d491231235959Z');
    expect(der.time(new Date('2050-01-01T00:00:00Z')).toString('latin1')).toBe('\x18\x0f20500101000000Z');
  });

  it('chooses PrintableString where it can, UTF8String otherwise', () => {
    expect(der.directoryString('poolspirit:agent')[0]).toBe(0x13);
    expect(der.directoryString('pool_a')[0]).toBe(0x0c);
    expect(der.directoryString('süd')[0]).toBe(0x0c);
  });

  it('refuses truncated input when reading', () => {
    expect(() => der.readElement(Buffer.from([0x30, 0x05, 0x01]), 0)).toThrow(/truncated/);
    expect(() => der.readElement(Buffer.from([0x30, 0x80]), 0)).toThrow(/bad length/);
  });

  it('writes iPAddress SANs as 4 or 16 octets', () => {
    expect(hex(ipAddressBytes('10.0.0.1'))).toBe('0a000001');
    expect(hex(ipAddressBytes('::1'))).toBe('00000000000000000000000000000001');
    expect(hex(ipAddressBytes('2001:db8::a:1'))).toBe('20010db80000000000000000000a0001');
    expect(hex(ipAddressBytes('fe80::'))).toBe('fe800000000000000000000000000000');
    expect(hex(ipAddressBytes('::ffff:192.0.2.1'))).toBe('00000000000000000000ffffc0000201');
    expect(() => ipAddressBytes('fe80::1%eth0')).toThrow(/IPv4 or IPv6/);
    expect(() => ipAddressBytes('pool-a')).toThrow(/IPv4 or IPv6/);
  });
});

const LEAF: LeafSpec = {
  id: 'apiserver',
  issuer: 'ca',
  subject: 'CN=poolspirit-apiserver, O=pool-spirit',
  dns: ['pool-a.kube-system.svc', 'localhost'],
  ips: ['127.0.0.1', '::1', '2001:db8::7'],
  usages: ['serverAuth', 'clientAuth'],
};

describe('certificates written as DER, as OpenSSL and @peculiar/x509 read them', () => {
  it('issues a CA and a leaf whose fields, chain and signature OpenSSL accepts', async () => {
    const ca = await issueCa('ca', 'CN=poolspirit-ca, OU=pool-a, O=pool-spirit', NOW, DEFAULT_PKI_POLICY, keys);
    const leaf = await issueLeaf(LEAF, ca, NOW, DEFAULT_PKI_POLICY, keys);
    const caCert = new X509Certificate(ca.certPem);
    const leafCert = new X509Certificate(leaf.certPem);
    expect(caCert.ca).toBe(true);
    expect(caCert.verify(caCert.publicKey)).toBe(true);
    expect(caCert.subject).toBe('CN=poolspirit-ca\nOU=pool-a\nO=pool-spirit');
    expect(leafCert.ca).toBe(false);
    expect(leafCert.checkIssued(caCert)).toBe(true);
    expect(leafCert.verify(caCert.publicKey)).toBe(true);
    expect(leafCert.issuer).toBe(caCert.subject);
    expect(leafCert.subjectAltName).toBe(
      'DNS:pool-a.kube-system.svc, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:2001:DB8:0:0:0:0:0:7',
    );
    expect([...(leafCert.keyUsage ?? [])].sort()).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(leafCert.validToDate.getTime()).toBe(leaf.notAfter.getTime());
    expect(leafCert.validFromDate.getTime()).toBe(Math.floor((NOW.getTime() - 5 * 60_000) / 1000) * 1000);
    // The reuse check (which runs on every reconcile) keeps what was just issued.
    expect(
      checkCertificate(leaf.certPem, leaf.keyPem, NOW, DEFAULT_PKI_POLICY, { leaf: LEAF, ca: caCert }),
    ).toMatchObject({
      certPem: leaf.certPem,
    });

    // @peculiar/x509 (what issued certificates before) reads the same extensions.
    const parsed = new x509.X509Certificate(leaf.certPem);
    const bc = parsed.getExtension(x509.BasicConstraintsExtension);
    expect({ ca: bc?.ca, critical: bc?.critical }).toEqual({ ca: false, critical: true });
    const ku = parsed.getExtension(x509.KeyUsagesExtension);
    expect({ usages: ku?.usages, critical: ku?.critical }).toEqual({
      usages: x509.KeyUsageFlags.digitalSignature,
      critical: true,
    });
    const aki = parsed.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
    const caSki = new x509.X509Certificate(ca.certPem).getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
    expect(aki).toBeDefined();
    expect(aki).toBe(caSki);
    expect(parsed.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toBe(
      await new x509.PublicKey(parsed.publicKey.rawData)
        .getKeyIdentifier('SHA-1')
        .then((b) => Buffer.from(b).toString('hex')),
    );
  });

  it('chains a new leaf to a CA the earlier library issued (its subject kept byte for byte)', async () => {
    const pair = await keys.generateKeyPair('legacy-ca');
    const legacy = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: 'CN=poolspirit-ca, OU=pool-a, O=pool-spirit',
      notBefore: NOW,
      notAfter: new Date(NOW.getTime() + 365 * 86_400_000),
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      keys: pair,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        await x509.SubjectKeyIdentifierExtension.create(pair.publicKey),
      ],
    });
    const caPem = legacy.toString('pem');
    const keyPem = pemEncode(await crypto.subtle.exportKey('pkcs8', pair.privateKey), 'PRIVATE KEY');
    const leaf = await issueLeaf(
      LEAF,
      { certPem: caPem, keyPem, notAfter: legacy.notAfter },
      NOW,
      DEFAULT_PKI_POLICY,
      keys,
    );
    const caCert = new X509Certificate(caPem);
    const leafCert = new X509Certificate(leaf.certPem);
    expect(leafCert.checkIssued(caCert)).toBe(true);
    expect(leafCert.verify(caCert.publicKey)).toBe(true);
    // A leaf never outlives its CA.
    expect(leaf.notAfter.getTime()).toBe(legacy.notAfter.getTime());
    expect(new x509.X509Certificate(leaf.certPem).getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(
      legacy.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId,
    );
  });

  it('names the field of a subject it cannot write', async () => {
    await expect(issueCa('ca', 'CN=a, L=Berlin', NOW, DEFAULT_PKI_POLICY, keys)).rejects.toThrow(/L is not issued/);
    await expect(issueCa('ca', 'no-equals-sign', NOW, DEFAULT_PKI_POLICY, keys)).rejects.toThrow(/expected TYPE=value/);
  });
});
