/**
 * Plain RFC 8032 Ed25519 through the runtime's native implementation (node:crypto, BoringSSL in
 * Bun): about ten times cheaper than noble's pure-JS verify and sign, and synchronous, so a write
 * transaction that checks a signature holds the writer no longer than the check (WebCrypto's
 * `subtle.verify` yields to the event loop). Key objects are
 * built once per key and kept in a bounded cache.
 */
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToNumberLE } from '@noble/curves/utils.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { Lru } from '../domain/lru.ts';

// DER prefixes of an Ed25519 SubjectPublicKeyInfo and PKCS#8 PrivateKeyInfo (RFC 8410); the raw
// 32-byte key follows each.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

const Fn = ed25519.Point.Fn;
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

/**
 * The process's own Ed25519 key for `hashedBaseMultiple`: a random seed drawn at first use, never
 * stored, and the secret prefix RFC 8032 §5.1.6 derives nonces from (SHA-512(seed)[32..64]).
 */
let nonceKey: { key: KeyObject; prefix: Uint8Array } | null = null;

/**
 * A secret scalar r = SHA-512(prefix ‖ input) mod L, with `prefix` a per-process random secret, and
 * its multiple r·B of the base point — both from one native Ed25519 signature of `input`: RFC 8032
 * signing derives exactly this r and publishes R = r·B as the signature's first half (the rest of the
 * signature is discarded). About 15 µs against ~110 µs for noble's constant-time base multiplication,
 * and BoringSSL's is constant-time too. r is a 512-bit hash reduced mod L, as RFC 9591's H3 nonces
 * are; it is 0 only with probability ~2^-252, and then `null` is returned.
 */
export function hashedBaseMultiple(input: Uint8Array): { scalar: bigint; point: Uint8Array } | null {
  if (nonceKey === null) {
    const seed = randomBytes(32);
    nonceKey = { key: createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }), prefix: new Uint8Array(createHash('sha512').update(seed).digest().subarray(32)) };
    seed.fill(0);
  }
  const hasher = new Bun.CryptoHasher('sha512');
  hasher.update(nonceKey.prefix);
  hasher.update(input);
  const scalar = Fn.create(bytesToNumberLE(hasher.digest() as Uint8Array));
  if (scalar === 0n) return null;
  return { scalar, point: new Uint8Array(sign(null, input, nonceKey.key).subarray(0, 32)) };
}
