import type { KeyObject } from 'node:crypto';
import { sha256Hex } from '../hash.ts';
import { ecKeyDer, ecPublicKeyDer } from './ec-key-der.ts';
import { pemEncode } from './pem.ts';

/** PKCS#8 PEM of an ECDSA P-256 private key (./ec-key-der.ts: not OpenSSL's slower encoder). */
export function privateKeyPem(key: KeyObject): string {
  return pemEncode(ecKeyDer(key).pkcs8, 'PRIVATE KEY');
}

/** SubjectPublicKeyInfo PEM of an ECDSA P-256 key. */
export function publicKeyPem(key: KeyObject): string {
  return pemEncode(ecPublicKeyDer(key), 'PUBLIC KEY');
}

/** A positive, unique-enough serial derived from the key (DER SubjectPublicKeyInfo): no hidden randomness in the core. */
export function serialFor(id: string, now: Date, spki: Buffer): string {
  const hex = sha256Hex(`${id}|${now.toISOString()}|${spki.toString('hex')}`).slice(0, 32);
  return ((parseInt(hex.slice(0, 1), 16) & 7) | 1).toString(16) + hex.slice(1);
}
