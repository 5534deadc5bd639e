import { webcrypto } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '../../../shared/x509.ts';
import type { CertificateAuthority } from '../pki.ts';

export interface ClusterCa {
  certPem: string;
  /** Signs node certificates for the local stack's YurtHub stand-ins. */
  keys: webcrypto.CryptoKeyPair;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const CERT_FILE = 'ca.crt';
const KEY_FILE = 'ca.key';

/**
 * The local clusters' CA (kube-apiserver's client CA in a real cluster), published to kube-root-ca.crt.
 * Generated per run and kept in memory only; loadOrCreateClusterCa keeps one in a state directory.
 */
export async function createClusterCa(now = new Date()): Promise<ClusterCa> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=kubernetes',
    notBefore: now,
    notAfter: new Date(now.getTime() + 3650 * 86_400_000),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
    ],
  });
  return { certPem: cert.toString('pem'), keys };
}

/** The CA in the shape the local PKI signs with (it signs with the key object; no key PEM is needed). */
export function clusterAuthority(ca: ClusterCa): CertificateAuthority {
  return {
    certPem: ca.certPem,
    keyPem: '',
    cert: new x509.X509Certificate(ca.certPem),
    privateKey: ca.keys.privateKey,
  };
}

/**
 * A resumed local stack must keep its CA: the clusters' kube-root-ca.crt and every certificate the
 * pool-spirits were rendered with name it. Like a real control plane's pki directory, the key is kept in
 * the state directory (mode 0600), and nowhere else.
 */
export async function loadOrCreateClusterCa(dir: string): Promise<ClusterCa> {
  const certFile = join(dir, CERT_FILE);
  const keyFile = join(dir, KEY_FILE);
  let certPem: string;
  let keyPem: string;
  try {
    [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const ca = await createClusterCa();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', ca.keys.privateKey);
    // The key first: a crash between the writes leaves no cert, and the next start makes a new pair.
    await writeFile(keyFile, x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), { mode: 0o600 });
    await writeFile(certFile, ca.certPem, { mode: 0o644 });
    return ca;
  }
  const cert = new x509.X509Certificate(certPem);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(keyPem), ALGORITHM, true, [
    'sign',
  ]);
  const publicKey = await cert.publicKey.export(ALGORITHM, ['verify'], webcrypto);
  return { certPem, keys: { privateKey, publicKey } };
}
