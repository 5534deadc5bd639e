import * as x509 from '../../shared/x509.ts';
import { sha256Hex } from '../hash.ts';
import { KEY_ALGORITHM } from './keys.ts';
import type { Crypto, CryptoKey } from './webcrypto.ts';

export async function importPrivateKey(pem: string, crypto: Crypto): Promise<CryptoKey> {
  return crypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(pem), KEY_ALGORITHM, true, ['sign']);
}

export async function privateKeyPem(key: CryptoKey, crypto: Crypto): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** SPKI bytes of the public half of a private key (WebCrypto has no direct derivation; JWK carries x, y). */
export async function publicKeyOf(privateKey: CryptoKey, crypto: Crypto): Promise<ArrayBuffer> {
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', privateKey);
  const pub = await crypto.subtle.importKey('jwk', { kty, crv, x, y }, KEY_ALGORITHM, true, ['verify']);
  return crypto.subtle.exportKey('spki', pub);
}

/** A positive, unique-enough serial derived from the key: no hidden randomness in the core. */
export async function serialFor(id: string, now: Date, publicKey: CryptoKey, crypto: Crypto): Promise<string> {
  const spki = Buffer.from(await crypto.subtle.exportKey('spki', publicKey)).toString('hex');
  const hex = sha256Hex(`${id}|${now.toISOString()}|${spki}`).slice(0, 32);
  return ((parseInt(hex[0], 16) & 7) | 1).toString(16) + hex.slice(1);
}

export function bytesEqual(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean {
  return Buffer.compare(toBuffer(a), toBuffer(b)) === 0;
}

function toBuffer(v: ArrayBuffer | ArrayBufferView): Buffer {
  return ArrayBuffer.isView(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : Buffer.from(v);
}
