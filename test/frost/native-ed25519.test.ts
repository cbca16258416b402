import { describe, expect, test } from 'bun:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { ed25519Sign, ed25519Verifies, hashedBaseMultiple } from '../../src/frost/native-ed25519.ts';
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

describe('hashedBaseMultiple: a secret scalar and its base multiple from one native signature', () => {
  const Point = ed25519.Point;

  test('the point is exactly scalar·B (noble), for 300 inputs; the scalar is canonical and non-zero', () => {
    for (let i = 0; i < 300; i++) {
      const made = hashedBaseMultiple(solanaLikeMessage(i % 7).subarray(0, 32 + i))!;
      expect(made.scalar > 0n && made.scalar < Point.Fn.ORDER).toBe(true);
      expect(made.point).toEqual(Point.BASE.multiply(made.scalar).toBytes());
    }
  });

  test('is a function of its input (a per-process secret prefix, fixed) and differs for every input', () => {
    const input = new Uint8Array(64).fill(7);
    expect(hashedBaseMultiple(input)).toEqual(hashedBaseMultiple(input.slice()));
    const scalars = new Set<bigint>();
    for (let i = 0; i < 500; i++) scalars.add(hashedBaseMultiple(new Uint8Array([i & 0xff, i >> 8]))!.scalar);
    expect(scalars.size).toBe(500);
  });

  test('the secret prefix is drawn per process: another process gives another scalar for the same input', async () => {
    const script = `import { hashedBaseMultiple } from ${JSON.stringify(new URL('../../src/frost/native-ed25519.ts', import.meta.url).pathname)}; console.log(hashedBaseMultiple(new Uint8Array(64)).scalar.toString())`;
    const other = Bun.spawnSync([process.execPath, '-e', script]);
    expect(other.exitCode).toBe(0);
    const theirs = BigInt(other.stdout.toString().trim());
    expect(theirs > 0n).toBe(true);
    expect(theirs).not.toBe(hashedBaseMultiple(new Uint8Array(64))!.scalar);
  });
});
