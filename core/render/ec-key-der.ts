/**
 * DER SubjectPublicKeyInfo and PKCS#8 of an ECDSA P-256 key, built from one JWK export. Why not
 * `KeyObject.export({ type: 'spki' | 'pkcs8', format: 'der' })`: OpenSSL 3 runs a provider encoder on each
 * call, and a new pool's eight keys cost 303 µs that way against 101 µs here, where the private key's JWK
 * carries x, y and d at once (docs/decisions/0031-ec-keys-encoded-by-hand.md). The bytes are OpenSSL's own,
 * byte for byte (test/core/render/ec-key-der.test.ts).
 *
 * Every field of a P-256 key has a fixed length, so each structure is a fixed header and the key's bytes.
 * The headers are written out rather than built with ./der.ts: ./pki-keys.ts, which the reconcile loads at
 * start (the service-account key pair), uses this too, and the DER writer loads only to issue (./pki.ts).
 */
import type { JsonWebKey, KeyObject } from 'node:crypto';

const FIELD_BYTES = 32;

/** SEQUENCE { OID 1.2.840.10045.2.1 (id-ecPublicKey), OID 1.2.840.10045.3.1.7 (prime256v1) } */
const ALGORITHM = [0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const CURVE = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];

/** SubjectPublicKeyInfo: SEQUENCE { algorithm, BIT STRING (no unused bits) 04 || X || Y }. */
const SPKI_HEADER = Buffer.from([0x30, 0x59, ...ALGORITHM, ...CURVE, 0x03, 0x42, 0x00, 0x04]);

/**
 * PKCS#8 as OpenSSL 3 writes it: SEQUENCE { INTEGER 0, algorithm, OCTET STRING { ECPrivateKey: SEQUENCE
 * { INTEGER 1, OCTET STRING d, [1] { BIT STRING 04 || X || Y } } } }, the curve named once, outside
 * (no [0] parameters inside ECPrivateKey).
 */
const PKCS8_HEADER = Buffer.from([
  ...[0x30, 0x81, 0x87, 0x02, 0x01, 0x00, ...ALGORITHM, ...CURVE],
  ...[0x04, 0x6d, 0x30, 0x6b, 0x02, 0x01, 0x01, 0x04, 0x20],
]);
const PKCS8_PUBLIC_KEY = Buffer.from([0xa1, 0x44, 0x03, 0x42, 0x00, 0x04]);

export interface EcKeyDer {
  spki: Buffer;
  pkcs8: Buffer;
}

/** Both encodings of a P-256 private key (and of its public half) from one export. */
export function ecKeyDer(privateKey: KeyObject): EcKeyDer {
  const jwk = p256Jwk(privateKey);
  const x = field(jwk, 'x');
  const y = field(jwk, 'y');
  return {
    spki: Buffer.concat([SPKI_HEADER, x, y]),
    pkcs8: Buffer.concat([PKCS8_HEADER, field(jwk, 'd'), PKCS8_PUBLIC_KEY, x, y]),
  };
}

/** SubjectPublicKeyInfo of a P-256 key, public or private. */
export function ecPublicKeyDer(key: KeyObject): Buffer {
  const jwk = p256Jwk(key);
  return Buffer.concat([SPKI_HEADER, field(jwk, 'x'), field(jwk, 'y')]);
}

function p256Jwk(key: KeyObject): JsonWebKey {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') throw new Error('EC key DER: expected an ECDSA P-256 key');
  return jwk;
}

/** A coordinate or the private scalar, left-padded to the field's 32 bytes as DER has it. */
function field(jwk: JsonWebKey, name: 'x' | 'y' | 'd'): Buffer {
  const value = jwk[name];
  if (typeof value !== 'string') throw new Error(`EC key DER: the key has no ${name}`);
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length === FIELD_BYTES) return bytes;
  if (bytes.length > FIELD_BYTES) throw new Error(`EC key DER: ${name} is longer than ${FIELD_BYTES} bytes`);
  return Buffer.concat([Buffer.alloc(FIELD_BYTES - bytes.length), bytes]);
}
