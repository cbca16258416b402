import { describe, expect, it } from 'bun:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { hexToBytes } from '@noble/hashes/utils.js';
import { elementProblem } from '../../src/frost/group.ts';

const Point = ed25519.Point;
const P = 2n ** 255n - 19n;
const le = (n: bigint, sign = false) => {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  if (sign) out[31]! |= 0x80;
  return out;
};

describe('elementProblem (RFC 9591 DeserializeElement)', () => {
  it('names every non-canonical encoding as such, checked on the bytes', () => {
    for (const bytes of [le(P), le(P + 1n), le(2n ** 255n - 1n), le(P, true), le(1n, true), le(P - 1n, true)]) {
      expect(elementProblem(bytes)).toBe('is not a canonical point encoding');
    }
  });

  it('names off-curve, identity and torsion points, and accepts prime-order points with either sign of x', () => {
    expect(elementProblem(hexToBytes('0200000000000000000000000000000000000000000000000000000000000000'))).toBe('is not a point on Ed25519');
    expect(elementProblem(le(1n))).toBe('is the identity point');
    expect(elementProblem(le(P - 1n))).toBe('is not in the prime-order subgroup');
    for (let k = 1n; k < 40n; k++) {
      const p = Point.BASE.multiply(k * 7919n);
      expect(elementProblem(p.toBytes())).toBeNull();
      expect(elementProblem(p.negate().toBytes())).toBeNull();
    }
  });
});
