import { sha256Hex } from '../hash.ts';
import { KEY_ALGORITHM } from './keys.ts';
import { pemDecode, pemEncode } from './pem.ts';
import type { Crypto, CryptoKey } from './webcrypto.ts';

/** A PKCS#8 PEM key as a WebCrypto signing key (only the issuing path signs). */
export async function importPrivateKey(pem: string, crypto: Crypto): Promise<CryptoKey> {
  return crypto.subtle.importKey('pkcs8', pemDecode(pem), KEY_ALGORITHM, true, ['sign']);
}

export async function privateKeyPem(key: CryptoKey, crypto: Crypto): Promise<string> {
  return pemEncode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

export async function publicKeyPem(key: CryptoKey, crypto: Crypto): Promise<string> {
  return pemEncode(await crypto.subtle.exportKey('spki', key), 'PUBLIC KEY');
}

/** A positive, unique-enough serial derived from the key: no hidden randomness in the core. */
export async function serialFor(id: string, now: Date, publicKey: CryptoKey, crypto: Crypto): Promise<string> {
  const spki = Buffer.from(await crypto.subtle.exportKey('spki', publicKey)).toString('hex');
  const hex = sha256Hex(`${id}|${now.toISOString()}|${spki}`).slice(0, 32);
  return ((parseInt(hex.slice(0, 1), 16) & 7) | 1).toString(16) + hex.slice(1);
}
