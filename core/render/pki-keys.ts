import type { KeyObject } from 'node:crypto';
import { sha256Hex } from '../hash.ts';
import { pemEncode } from './pem.ts';

export function privateKeyPem(key: KeyObject): string {
  return pemEncode(key.export({ type: 'pkcs8', format: 'der' }), 'PRIVATE KEY');
}

export function publicKeyPem(key: KeyObject): string {
  return pemEncode(key.export({ type: 'spki', format: 'der' }), 'PUBLIC KEY');
}

/** A positive, unique-enough serial derived from the key (DER SubjectPublicKeyInfo): no hidden randomness in the core. */
export function serialFor(id: string, now: Date, spki: Buffer): string {
  const hex = sha256Hex(`${id}|${now.toISOString()}|${spki.toString('hex')}`).slice(0, 32);
  return ((parseInt(hex.slice(0, 1), 16) & 7) | 1).toString(16) + hex.slice(1);
}
