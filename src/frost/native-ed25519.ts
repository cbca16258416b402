/**
 * Plain RFC 8032 Ed25519 through the runtime's native implementation (node:crypto, BoringSSL in
 * Bun): about ten times cheaper than noble's pure-JS verify and sign, and synchronous, so it can run
 * inside a `bun:sqlite` transaction (WebCrypto's `subtle.verify` is asynchronous). Key objects are
 * built once per key and kept in a bounded cache.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { bytesToHex } from '@noble/hashes/utils.js';
import { Lru } from '../domain/lru.ts';

// DER prefixes of an Ed25519 SubjectPublicKeyInfo and PKCS#8 PrivateKeyInfo (RFC 8410); the raw
// 32-byte key follows each.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

const publicKeys = new Lru<string, KeyObject>(4096);
// Keyed by the keypair's own array (the fee payer's lives as long as the daemon): no secret
// material is copied into a map key.
const privateKeys = new WeakMap<Uint8Array, KeyObject>();

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const id = bytesToHex(publicKey);
  let key = publicKeys.get(id);
  if (key === undefined) {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    publicKeys.set(id, key);
  }
  return key;
}

/** Whether `signature` is a valid Ed25519 signature of `message` under the 32-byte `publicKey`. */
export function ed25519Verifies(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return verify(null, message, publicKeyObject(publicKey), signature);
  } catch {
    // A public key that is not a curve point cannot verify anything.
    return false;
  }
}

/**
 * The Ed25519 signature of `message` by the 64-byte Solana keypair (seed ‖ public key); the same
 * bytes noble's `ed25519.sign` gives, since RFC 8032 signing is deterministic.
 */
export function ed25519Sign(message: Uint8Array, keypair: Uint8Array): Uint8Array {
  if (keypair.length !== 64) throw new TypeError('an Ed25519 keypair is 64 bytes');
  let key = privateKeys.get(keypair);
  if (key === undefined) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, keypair.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
    privateKeys.set(keypair, key);
  }
  return new Uint8Array(sign(null, message, key));
}
