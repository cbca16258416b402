/**
 * API key format (DESIGN §3): `wallet_bot_` / `wallet_merchant_` / `wallet_owner_` followed by
 * 32 random bytes in base58. Only the SHA-256 of a key is stored; the key is shown once.
 */
import { sha256 } from './sha256.ts';
import { getBase58Decoder } from '@solana/kit';
import { timingSafeEqual } from 'node:crypto';

export const KEY_PREFIXES = { bot: 'wallet_bot_', merchant: 'wallet_merchant_', owner: 'wallet_owner_' } as const;
export type KeyKind = keyof typeof KEY_PREFIXES;

const KEY_BODY = /^[1-9A-HJ-NP-Za-km-z]{32,50}$/;

/** A fresh key of `kind` and the hash to store. */
export function newApiKey(kind: KeyKind): { key: string; hash: Uint8Array } {
  const key = `${KEY_PREFIXES[kind]}${getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))}`;
  return { key, hash: hashApiKey(key) };
}

/** SHA-256 of the whole key string. */
export function hashApiKey(key: string): Uint8Array {
  return sha256(key);
}

/** What is wrong with `key` as a key of `kind`, or null when it is well formed. */
export function keyProblem(key: string, kind: KeyKind): string | null {
  const prefix = KEY_PREFIXES[kind];
  if (!key.startsWith(prefix)) return `it must start with ${prefix}`;
  const body = key.slice(prefix.length);
  if (/[^1-9A-HJ-NP-Za-km-z]/.test(body)) return `the part after ${prefix} must be base58 (no 0, O, I, l or other characters), and "${body.match(/[^1-9A-HJ-NP-Za-km-z]/)![0]}" is not`;
  if (!KEY_BODY.test(body)) return `the part after ${prefix} must be 32 to 50 base58 characters, not ${body.length}`;
  return null;
}

/** True when `key` has the prefix of `kind` and a well-formed random part. */
export function isWellFormedKey(key: string, kind: KeyKind): boolean {
  const prefix = KEY_PREFIXES[kind];
  return key.startsWith(prefix) && KEY_BODY.test(key.slice(prefix.length));
}

/** Constant-time equality of two hashes. */
export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
