import type { Crypto, CryptoKeyPair, EcKeyGenParams, EcKeyImportParams, EcdsaParams } from './webcrypto.ts';

/**
 * Key generation is injected so the core stays free of hidden randomness: production passes
 * webCryptoKeyFactory(); tests and benchmarks may pass cachingKeyFactory() to skip regenerating keys.
 *
 * ECDSA P-256 rather than RSA 2048: the same security level as RSA 3072, key generation in about a
 * millisecond instead of tens to hundreds (eight key pairs per pool, in a Lambda), smaller Secrets, and
 * every consumer supports it: Go's TLS stack (kube-apiserver, etcd, YurtHub, kubelet), client-go
 * kubeconfigs, and ES256 service-account token signing.
 */
export const KEY_ALGORITHM: EcKeyImportParams & EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
export const SIGNING_ALGORITHM: EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };

export interface KeyFactory {
  /** A fresh extractable ECDSA P-256 key pair; `purpose` names the certificate (for caches and logs). */
  generateKeyPair(purpose: string): Promise<CryptoKeyPair>;
  /** The WebCrypto implementation used to import, sign and export. */
  readonly crypto: Crypto;
}

export function webCryptoKeyFactory(crypto: Crypto = globalThis.crypto): KeyFactory {
  return {
    crypto,
    generateKeyPair: () => crypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']) as Promise<CryptoKeyPair>,
  };
}

/** Reuses one key pair per purpose (and counts generations): for tests and benchmarks, never production. */
export function cachingKeyFactory(inner: KeyFactory = webCryptoKeyFactory()): KeyFactory & { generated: number } {
  const cache = new Map<string, Promise<CryptoKeyPair>>();
  const factory = {
    crypto: inner.crypto,
    generated: 0,
    generateKeyPair(purpose: string) {
      factory.generated++;
      let pair = cache.get(purpose);
      if (!pair) cache.set(purpose, (pair = inner.generateKeyPair(purpose)));
      return pair;
    },
  };
  return factory;
}
