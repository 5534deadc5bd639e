import type { webcrypto } from 'node:crypto';

// The project compiles without the DOM lib; Node's WebCrypto types are the same interfaces.
export type Crypto = webcrypto.Crypto;
export type CryptoKey = webcrypto.CryptoKey;
export type CryptoKeyPair = webcrypto.CryptoKeyPair;
export type EcKeyGenParams = webcrypto.EcKeyGenParams;
export type EcKeyImportParams = webcrypto.EcKeyImportParams;
export type EcdsaParams = webcrypto.EcdsaParams;
