import { describe, expect, test } from 'bun:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { ed25519Sign, ed25519Verifies } from '../../src/frost/native-ed25519.ts';
import { solanaLikeMessage } from './helpers.ts';

describe('native Ed25519', () => {
  const seed = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(seed);
  const keypair = concatBytes(seed, publicKey);
  const message = solanaLikeMessage(5);

  test('signs the same bytes as noble (RFC 8032 signing is deterministic)', () => {
    expect(ed25519Sign(message, keypair)).toEqual(ed25519.sign(message, seed));
    expect(ed25519Sign(new Uint8Array(0), keypair)).toEqual(ed25519.sign(new Uint8Array(0), seed));
  });

  test('verifies what noble signs and refuses a flipped bit in the signature, message or key', () => {
    const signature = ed25519.sign(message, seed);
    expect(ed25519Verifies(signature, message, publicKey)).toBe(true);
    const flip = (bytes: Uint8Array, at: number) => {
      const copy = bytes.slice();
      copy[at]! ^= 1;
      return copy;
    };
    expect(ed25519Verifies(flip(signature, 3), message, publicKey)).toBe(false);
    expect(ed25519Verifies(flip(signature, 40), message, publicKey)).toBe(false);
    expect(ed25519Verifies(signature, flip(message, 10), publicKey)).toBe(false);
    expect(ed25519Verifies(signature, message, ed25519.getPublicKey(ed25519.utils.randomSecretKey()))).toBe(false);
  });

  test('refuses a signature with s ≥ L, malformed lengths and a key off the curve instead of throwing', () => {
    const signature = ed25519.sign(message, seed);
    const highS = signature.slice();
    // s + L encodes the same residue: a malleated signature RFC 8032 strict verification refuses.
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]!);
    s += ed25519.Point.Fn.ORDER;
    for (let i = 32; i < 64; i++, s >>= 8n) highS[i] = Number(s & 0xffn);
    expect(ed25519Verifies(highS, message, publicKey)).toBe(false);
    expect(ed25519Verifies(signature.subarray(0, 63), message, publicKey)).toBe(false);
    expect(ed25519Verifies(signature, message, publicKey.subarray(0, 31))).toBe(false);
    const notAPoint = new Uint8Array(32);
    notAPoint[0] = 2;
    expect(ed25519Verifies(signature, message, notAPoint)).toBe(false);
  });
});
