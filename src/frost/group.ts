/**
 * Strict decoding of Ed25519 group elements and scalars, as RFC 9591 §3.1 DeserializeElement /
 * DeserializeScalar require for FROST(Ed25519, SHA-512) (§6.1): canonical encodings only, points on
 * the curve, in the prime-order subgroup and not the identity; scalars below the group order L.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { bytesToNumberLE } from '@noble/curves/utils.js';
import type { Identifier } from './ids.ts';
import { Lru } from '../domain/lru.ts';
import { inPrimeOrderSubgroup } from './subgroup.ts';

/** Length of a serialized element (RFC 9591 §6.1: Ne = 32). */
export const ELEMENT_BYTES = 32;
/** Length of a serialized scalar (RFC 9591 §6.1: Ns = 32). */
export const SCALAR_BYTES = 32;

const Point = ed25519.Point;
const Fn = Point.Fn;
const Fp = Point.Fp;
const Y_MASK = (1n << 255n) - 1n;

/** A decoded element of the prime-order subgroup (noble's extended point). */
export type Element = InstanceType<typeof Point>;

/**
 * Elements already decoded and checked, by encoding. Validation is a pure function of the 32 bytes,
 * so a hit is as good as re-checking: a commitment is decoded and subgroup-checked once, not again
 * by the commitment list, the share and the aggregate (nor by the next request of its session).
 */
const validated = new Lru<string, Element>(8192);

function decode(bytes: Uint8Array): Element | string {
  if (!(bytes instanceof Uint8Array) || bytes.length !== ELEMENT_BYTES) return `must be ${ELEMENT_BYTES} bytes`;
  const key = bytesToHex(bytes);
  const known = validated.get(key);
  if (known !== undefined) return known;
  // Canonical means y < p, and no sign bit on a point whose x is 0 (y = 1 or y = p − 1). Checked on
  // the bytes: re-encoding the point to compare would cost a field inversion.
  const y = bytesToNumberLE(bytes) & Y_MASK;
  if (y >= Fp.ORDER || ((bytes[31]! & 0x80) !== 0 && (y === 1n || y === Fp.ORDER - 1n))) return 'is not a canonical point encoding';
  let p: Element;
  try {
    // Strict (RFC 8032) decoding yields a point on the curve or throws.
    p = Point.fromBytes(bytes);
  } catch {
    return 'is not a point on Ed25519';
  }
  if (p.is0()) return 'is the identity point';
  if (!inPrimeOrderSubgroup(p, y)) return 'is not in the prime-order subgroup';
  validated.set(key, p);
  return p;
}

/** Why `bytes` is not a valid FROST element, or `null` when it is one. */
export function elementProblem(bytes: Uint8Array): string | null {
  const result = decode(bytes);
  return typeof result === 'string' ? result : null;
}

/** The element `bytes` encodes (RFC 9591 §3.1 DeserializeElement); throws naming the problem. */
export function decodeElement(bytes: Uint8Array, what = 'element'): Element {
  const result = decode(bytes);
  if (typeof result === 'string') throw new Error(`${what} ${result}`);
  return result;
}

/**
 * Encodes `scalar·B` for a non-zero secret scalar with noble's constant-time precomputed base
 * multiplication, and records it as validated: a multiple of the base point by a non-zero scalar
 * below L is in the prime-order subgroup and not the identity, so our own commitments are never
 * decoded again.
 */
export function baseElement(scalar: bigint): Uint8Array {
  const p = Point.BASE.multiply(scalar);
  const bytes = p.toBytes();
  validated.set(bytesToHex(bytes), p);
  return bytes;
}

/**
 * Records `bytes`, made by this process as r·B for a non-zero scalar r below L (native-ed25519.ts
 * `hashedBaseMultiple`), as validated: in the prime-order subgroup and not the identity by
 * construction, so it only needs decoding, not the canonical and subgroup checks.
 */
export function knownBaseMultiple(bytes: Uint8Array): void {
  validated.set(bytesToHex(bytes), Point.fromBytes(bytes));
}

/** Why `bytes` is not a canonical scalar (little-endian, below L), or `null` when it is one. */
export function scalarProblem(bytes: Uint8Array): string | null {
  if (bytes.length !== SCALAR_BYTES) return `must be ${SCALAR_BYTES} bytes`;
  try {
    Fn.fromBytes(bytes);
  } catch {
    return 'is not a scalar below the group order';
  }
  return null;
}

/**
 * The verifying share of participant `id` implied by a key's VSS commitment, as in RFC 9591
 * Appendix C.2 `derive_group_info`: PK_id = Σ_j C_j · id^j.
 * `commitments` must already be valid elements.
 */
export function verifyingShareFor(commitments: readonly Uint8Array[], id: Identifier): Uint8Array {
  const x = Fn.fromBytes(hexToBytes(id));
  let power = Fn.ONE;
  let sum = Point.ZERO;
  for (const c of commitments) {
    sum = sum.add(decodeElement(c).multiplyUnsafe(power));
    power = Fn.mul(power, x);
  }
  return sum.toBytes();
}
