/**
 * Strict decoding of Ed25519 group elements and scalars, as RFC 9591 §3.1 DeserializeElement /
 * DeserializeScalar require for FROST(Ed25519, SHA-512) (§6.1): canonical encodings only, points on
 * the curve, in the prime-order subgroup and not the identity; scalars below the group order L.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { Identifier } from './ids.ts';

/** Length of a serialized element (RFC 9591 §6.1: Ne = 32). */
export const ELEMENT_BYTES = 32;
/** Length of a serialized scalar (RFC 9591 §6.1: Ns = 32). */
export const SCALAR_BYTES = 32;

const Point = ed25519.Point;
const Fn = Point.Fn;

/** Why `bytes` is not a valid FROST element, or `null` when it is one. */
export function elementProblem(bytes: Uint8Array): string | null {
  if (bytes.length !== ELEMENT_BYTES) return `must be ${ELEMENT_BYTES} bytes`;
  let p: InstanceType<typeof Point>;
  try {
    p = Point.fromBytes(bytes);
  } catch {
    return 'is not a point on Ed25519';
  }
  if (bytesToHex(p.toBytes()) !== bytesToHex(bytes)) return 'is not a canonical point encoding';
  if (p.is0()) return 'is the identity point';
  try {
    p.assertValidity();
  } catch {
    return 'is not a point on Ed25519';
  }
  if (!p.isTorsionFree()) return 'is not in the prime-order subgroup';
  return null;
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
    sum = sum.add(Point.fromBytes(c).multiplyUnsafe(power));
    power = Fn.mul(power, x);
  }
  return sum.toBytes();
}
