/**
 * One-time link tokens (magic links, approval links, session cookies): 32 random bytes in
 * base64url in the URL or cookie; only the SHA-256 is stored and compared in constant time.
 */
import { sha256 } from '@noble/hashes/sha2.js';

/** Shape of a token in a URL: anything else is answered "not found" without a lookup. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** SHA-256 of a token string. */
export function hashToken(token: string): Uint8Array {
  return sha256(new TextEncoder().encode(token));
}

/** A fresh token and the hash to store. */
export function newToken(): { token: string; hash: Uint8Array } {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  return { token, hash: hashToken(token) };
}
