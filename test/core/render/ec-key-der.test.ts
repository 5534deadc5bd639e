/**
 * The pool's EC keys are encoded by core/render/ec-key-der.ts, not by OpenSSL's encoders: the bytes must be
 * OpenSSL's own. Keys are generated at run time (none committed), and key bytes are compared as SHA-256
 * hashes or booleans, so a failure prints no private key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as der from '../../../core/render/der.ts';
import { ecKeyDer, ecPublicKeyDer } from '../../../core/render/ec-key-der.ts';
import { webCryptoKeyFactory } from '../../../core/render/keys.ts';
import { objectNames } from '../../../core/render/names.ts';
import { pemDecode } from '../../../core/render/pem.ts';
import { ensurePki } from '../../../core/render/pki.ts';
import { DEFAULT_PKI_POLICY, leafSpecs } from '../../../core/render/pki-spec.ts';

const KEYS = 300;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const newPair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });

/** Which encodings of a key differ from OpenSSL's (names only, never bytes). */
function differences(pair: ReturnType<typeof newPair>): string[] {
  const ours = ecKeyDer(pair.privateKey);
  const spki = pair.publicKey.export({ type: 'spki', format: 'der' });
  const pkcs8 = pair.privateKey.export({ type: 'pkcs8', format: 'der' });
  const out: string[] = [];
  if (sha256(ours.spki) !== sha256(spki)) out.push('spki');
  if (sha256(ours.pkcs8) !== sha256(pkcs8)) out.push('pkcs8');
  if (sha256(ecPublicKeyDer(pair.publicKey)) !== sha256(spki)) out.push('spki of the public key');
  if (sha256(ecPublicKeyDer(pair.privateKey)) !== sha256(spki)) out.push('spki of the private key');
  return out;
}

/** A fresh key whose JWK field `name` has a leading zero byte (about one key in 256). */
function keyWithLeadingZero(name: 'x' | 'y' | 'd') {
  for (let i = 0; i < 20_000; i++) {
    const pair = newPair();
    const value = pair.privateKey.export({ format: 'jwk' })[name];
    if (value && Buffer.from(value, 'base64url')[0] === 0) return pair;
  }
  throw new Error(`no key with a leading zero in ${name} in 20000 tries`);
}

describe('EC P-256 keys encoded by hand', () => {
  it(`equal OpenSSL's SPKI and PKCS#8 DER byte for byte (${KEYS} fresh keys)`, () => {
    const mismatches: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      const found = differences(newPair());
      if (found.length > 0) mismatches.push(`key ${i}: ${found.join(', ')}`);
    }
    expect(mismatches).toEqual([]);
  });

  it.each(['x', 'y', 'd'] as const)('pad a %s with a leading zero byte to 32 bytes, as OpenSSL does', (name) => {
    const pair = keyWithLeadingZero(name);
    expect(differences(pair)).toEqual([]);
    expect(ecKeyDer(pair.privateKey).pkcs8.length).toBe(138);
  });

  it('round-trip through createPrivateKey and createPublicKey', () => {
    const failures: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      const pair = newPair();
      const { spki, pkcs8 } = ecKeyDer(pair.privateKey);
      const privateKey = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
      const publicKey = createPublicKey({ key: spki, format: 'der', type: 'spki' });
      if (!privateKey.equals(pair.privateKey)) failures.push(`key ${i}: private key`);
      if (!publicKey.equals(pair.publicKey)) failures.push(`key ${i}: public key`);
      if (privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') failures.push(`key ${i}: curve`);
    }
    expect(failures).toEqual([]);
  });

  it('are the structures of RFC 5480 and RFC 5915 as written with the DER writer', () => {
    const pair = newPair();
    const jwk = pair.privateKey.export({ format: 'jwk' });
    const bytes = (field: string | undefined) => {
      const raw = Buffer.from(field ?? '', 'base64url');
      return Buffer.concat([Buffer.alloc(32 - raw.length), raw]);
    };
    const point = Buffer.concat([Buffer.from([4]), bytes(jwk.x), bytes(jwk.y)]);
    const algorithm = der.sequence(der.oid('1.2.840.10045.2.1'), der.oid('1.2.840.10045.3.1.7'));
    const spki = der.sequence(algorithm, der.bitString(point));
    const ecPrivateKey = der.sequence(
      der.smallInteger(1),
      der.octetString(bytes(jwk.d)),
      der.explicit(1, der.bitString(point)),
    );
    const pkcs8 = der.sequence(der.smallInteger(0), algorithm, der.octetString(ecPrivateKey));
    const ours = ecKeyDer(pair.privateKey);
    expect(sha256(ours.spki)).toBe(sha256(spki));
    expect(sha256(ours.pkcs8)).toBe(sha256(pkcs8));
  });

  it('refuse a key that is not P-256', () => {
    expect(() => ecKeyDer(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey)).toThrow(/P-256/);
    expect(() => ecKeyDer(generateKeyPairSync('ed25519').privateKey)).toThrow(/P-256/);
  });

  it('issue a pool whose keys are OpenSSL-readable and whose certificates verify', async () => {
    const pool = 'hangzhou';
    const result = await ensurePki({
      pool,
      leaves: leafSpecs(objectNames(pool), 'pool-spirit-system', 'cluster.local', '10.96.0.10'),
      existing: {},
      now: new Date(),
      keys: webCryptoKeyFactory(),
      policy: DEFAULT_PKI_POLICY,
    });
    const files = result.files;
    const failures: string[] = [];
    for (const name of Object.keys(files).filter((f) => f.endsWith('.crt'))) {
      const id = name.slice(0, -'.crt'.length);
      const cert = new X509Certificate(files[name]!);
      const key = createPrivateKey(files[`${id}.key`]!);
      if (!cert.checkPrivateKey(key)) failures.push(`${id}: key does not match`);
      // The key file is what OpenSSL itself writes for the key read back from it.
      if (sha256(pemDecode(files[`${id}.key`]!)) !== sha256(key.export({ type: 'pkcs8', format: 'der' })))
        failures.push(`${id}: key file is not OpenSSL's PKCS#8`);
      const issuer = id === 'ca' || id === 'etcd-ca' ? cert : new X509Certificate(issuerOf(files, cert));
      if (!cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) failures.push(`${id}: does not verify`);
    }
    const saPrivate = createPrivateKey(files['sa.key']!);
    const saPublic = createPublicKey(files['sa.pub']!);
    if (!createPublicKey(saPrivate).equals(saPublic)) failures.push('sa: public key does not match');
    if (sha256(pemDecode(files['sa.pub']!)) !== sha256(saPublic.export({ type: 'spki', format: 'der' })))
      failures.push("sa.pub is not OpenSSL's SPKI");
    expect(failures).toEqual([]);
    expect(Object.keys(files).filter((f) => f.endsWith('.crt')).length).toBe(7);
  });
});

/** The CA certificate (ca or etcd-ca) whose subject is the leaf's issuer. */
function issuerOf(files: Record<string, string>, leaf: X509Certificate): string {
  const ca = ['ca.crt', 'etcd-ca.crt']
    .map((f) => files[f]!)
    .find((pem) => new X509Certificate(pem).subject === leaf.issuer);
  if (!ca) throw new Error(`no CA with subject ${leaf.issuer}`);
  return ca;
}
