/**
 * The daemon's log key (DESIGN §9.1): an Ed25519 key derived from the master key, so it needs no
 * file of its own and survives a backup and restore. It signs decision-log heads; its public half
 * is published as a JWKS at /.well-known/agent-wallet/log-key and in `info`.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { ed25519Sign } from '../frost/native-ed25519.ts';

export interface LogKey {
  /** 64 bytes: seed ‖ public key (what ed25519Sign takes). */
  keypair: Uint8Array;
  publicKey: Uint8Array;
  /** The key id: the first 16 hex digits of sha256(public key). */
  kid: string;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; alg: 'EdDSA'; use: 'sig' };
}

const cache = new WeakMap<Uint8Array, LogKey>();

export function logKeyOf(masterKey: Uint8Array): LogKey {
  let key = cache.get(masterKey);
  if (!key) {
    const seed = sha256(concatBytes(utf8ToBytes('agent-wallet decision-log key v1\0'), masterKey));
    const publicKey = ed25519.getPublicKey(seed);
    const kid = Buffer.from(sha256(publicKey)).toString('hex').slice(0, 16);
    key = { keypair: concatBytes(seed, publicKey), publicKey, kid, jwk: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url'), kid, alg: 'EdDSA', use: 'sig' } };
    cache.set(masterKey, key);
  }
  return key;
}

export function signWithLogKey(masterKey: Uint8Array, message: Uint8Array): Uint8Array {
  return ed25519Sign(message, logKeyOf(masterKey).keypair);
}
