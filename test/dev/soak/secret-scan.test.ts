import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { kubeconfigYaml } from '../../../core/render/kubeconfig.ts';
import * as x509 from '../../../shared/x509.ts';
import { captureOutput } from '../../support/output-capture.ts';
import { kubeconfigSecrets, privateKeysInPem, SecretScanner, secretObjectSecrets } from '../../support/secret-scan.ts';

/** The scanner itself: it must find a secret in every encoding a leak could take, and nothing public. */
describe('secret scanner', () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecPem = ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const rsaPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs1' })
    .toString();
  const token = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXBheWxvYWQtZm9yLXRlc3Rz.Zm9vYmFyYmF6cXV4cXV1eHNpZ25hdHVyZQ';
  const kubeconfig = kubeconfigYaml({
    cluster: 'c',
    server: 'https://127.0.0.1:6443',
    caPem: 'ca',
    certPem: 'cert',
    keyPem: ecPem,
    user: 'u',
  });
  const scanner = new SecretScanner([
    ...privateKeysInPem(ecPem, 'ec'),
    ...privateKeysInPem(rsaPem, 'rsa'),
    ...kubeconfigSecrets(`users:\n- name: t\n  user:\n    token: ${token}\n`, 'kc'),
  ]);
  const der = (pem: string) => pem.replace(/-----[^-]+-----|\s/g, '');
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('collects private scalars of EC and RSA keys and kubeconfig tokens', () => {
    expect(scanner.secrets.map((s) => s.kind).sort()).toEqual([
      'private-key',
      'private-key',
      'private-key',
      'private-key',
      'token',
    ]);
  });

  const leaks: Record<string, () => string> = {
    'a PEM key in a log line': () => `loaded key ${ecPem}`,
    'a JSON-escaped PEM': () => JSON.stringify({ msg: 'oops', key: ecPem }),
    'the DER as one base64 line (no PEM armour)': () => `key=${der(ecPem)}`,
    'a Secret data value (base64 of the PEM)': () => JSON.stringify({ data: { 'tls.key': b64(ecPem) } }),
    'a kubeconfig inside Secret data (base64 of YAML of base64)': () =>
      JSON.stringify({ data: { kubeconfig: b64(kubeconfig) } }),
    'the private scalar as hex': () =>
      `d=${Buffer.from(ec.privateKey.export({ format: 'jwk' }).d!, 'base64url').toString('hex')}`,
    'an RSA key body wrapped at 64 columns': () =>
      der(rsaPem)
        .match(/.{1,64}/g)!
        .slice(3, 8)
        .join('\n'),
    'a bearer token': () => `GET /api Authorization: Bearer ${token}`,
    'a token base64-encoded': () => `{"blob":"${b64(`token=${token}`)}"}`,
    'half of a key (truncated log)': () => ecPem.slice(0, ecPem.length / 2 + 40),
  };
  for (const [name, leak] of Object.entries(leaks)) {
    it(`finds ${name}`, () => {
      const findings = scanner.scan('test', leak());
      expect(findings.length, `nothing found in ${name}`).toBeGreaterThan(0);
      // Findings name the kind and origin of the secret, never its value.
      for (const f of findings) expect(f.what).not.toContain(der(ecPem).slice(40, 80));
    });
  }

  it('finds generic secrets it was not told about', () => {
    const unknown = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'sec1' })
      .toString();
    expect(scanner.scan('x', unknown).map((f) => f.what)).toEqual(['pattern PEM private key']);
    expect(scanner.scan('x', 'users:\n- user:\n    client-key-data: AAAA').map((f) => f.what)).toContain(
      'pattern kubeconfig client-key-data',
    );
    expect(scanner.scan('x', '{"token":"abcdefABCDEF0123456789"}').map((f) => f.what)).toEqual(['pattern token value']);
  });

  it('does not flag public material: the certificate and public key of a known private key', async () => {
    const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ])) as webcrypto.CryptoKeyPair;
    const pkcs8 = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=t',
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    });
    const s = new SecretScanner(privateKeysInPem(pkcs8, 'k'));
    const spki = x509.PemConverter.encode(await webcrypto.subtle.exportKey('spki', keys.publicKey), 'PUBLIC KEY');
    for (const text of [
      cert.toString('pem'),
      b64(cert.toString('pem')),
      spki,
      JSON.stringify({ ca: cert.toString('pem') }),
      'ordinary log line with a uuid 3f2b1c9e-8a7d-4e6f-9b0a-1c2d3e4f5a6b',
    ]) {
      expect(s.scan('public', text)).toEqual([]);
    }
    expect(s.scan('private', pkcs8).map((f) => f.what)).toEqual(
      expect.arrayContaining(['known private-key (k key #1)']),
    );
  });

  it('reads the keys and kubeconfig credentials out of Secret objects', () => {
    const secret = {
      metadata: { namespace: 'ns', name: 's' },
      data: {
        'ca.crt': b64('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'),
        'tls.key': b64(ecPem),
        kubeconfig: b64(kubeconfig),
      },
    };
    expect(secretObjectSecrets(secret).map((s) => s.label)).toEqual([
      'Secret ns/s data tls.key key #1',
      'Secret ns/s data kubeconfig user u client-key-data key #1',
    ]);
  });

  it('negative control: a key planted in a captured log line is found, where and which kind only', () => {
    const capture = captureOutput();
    try {
      console.error('reconcile failed', { key: ecPem });
      process.stderr.write('a harmless line\n');
    } finally {
      capture.stop();
    }
    const findings = capture.writes.flatMap((w, i) => scanner.scan(`log write ${i + 1} (${w.stream})`, w.text));
    expect(findings.map((f) => f.where)).toContain('log write 1 (console.error)');
    expect(findings.some((f) => f.where.includes('write 2') || f.where.endsWith('(stderr)'))).toBe(false);
    expect(findings.map((f) => f.what)).toEqual(
      expect.arrayContaining(['pattern PEM private key', 'known private-key (ec key #1)']),
    );
  });
});
