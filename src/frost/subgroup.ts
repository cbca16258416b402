/**
 * Whether an Ed25519 point lies in the prime-order subgroup, with one native X25519 scalar
 * multiplication (BoringSSL through node:crypto) instead of noble's pure-JS [L]·P = O (~250 µs,
 * the largest part of decoding a FROST commitment; ~45 µs here).
 *
 * The group is Z_L × Z_8: P = P_L + T with T of order dividing 8, and P is in the subgroup iff T = O.
 * X25519 multiplies the Montgomery u-coordinate by a clamped scalar k (k ≡ 0 mod 8, 2^254 ≤ k < 2^255);
 * k = 5 + 7L is such a scalar (5 + 7·5 ≡ 0 mod 8) and X25519 leaves it unchanged. Since 8 divides k,
 * [k]T = O, so X25519 gives u([k]P) = u([5]P_L). In JS, [5]P = [5]P_L + [5]T. The two u-coordinates
 * agree iff [5]P = ±[5]P_L, i.e. iff [5]T = O (the minus sign would need an order-L point equal to
 * a torsion point), and since 5 is odd, iff T = O. A point with P_L = O gives X25519's all-zero
 * output, which the runtime refuses, so it is refused here too.
 * test/frost/subgroup.test.ts holds this to noble's isTorsionFree on every torsion class.
 */
import { createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToNumberLE, numberToBytesLE } from '@noble/curves/utils.js';

const Point = ed25519.Point;
const Fp = Point.Fp;

/** k = 5 + 7L: a multiple of 8 in [2^254, 2^255), so X25519's clamping keeps it as it is. */
const K = 5n + 7n * Point.Fn.ORDER;
// DER prefixes of an X25519 PKCS#8 private key and SubjectPublicKeyInfo (RFC 8410); the 32 raw bytes follow.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');
const scalar = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, numberToBytesLE(K, 32)]), format: 'der', type: 'pkcs8' });

/**
 * True when `p`, with affine y-coordinate `y` (its encoding without the sign bit, which the caller
 * has read already), has no small-order component. The identity is refused by the caller before.
 */
export function inPrimeOrderSubgroup(p: InstanceType<typeof Point>, y: bigint): boolean {
  // u = (1 + y) / (1 − y); y = 1 is the identity.
  if (y === 1n) return false;
  const u = Fp.div(Fp.add(1n, y), Fp.sub(1n, y));
  let shared: Buffer;
  try {
    shared = diffieHellman({ privateKey: scalar, publicKey: createPublicKey({ key: Buffer.concat([SPKI_PREFIX, numberToBytesLE(u, 32)]), format: 'der', type: 'spki' }) });
  } catch {
    // The runtime refuses an all-zero output: [k]P = O, so P_L = O and P is a small-order point.
    return false;
  }
  const expected = bytesToNumberLE(shared);
  // u([5]P) = (Z + Y) / (Z − Y) in projective coordinates: compared without an inversion.
  const { Y, Z } = p.double().double().add(p);
  return Fp.eql(Fp.mul(expected, Fp.sub(Z, Y)), Fp.add(Z, Y));
}
