import { describe, expect, it } from 'bun:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { inPrimeOrderSubgroup } from '../../src/frost/subgroup.ts';

const Point = ed25519.Point;
// A point of order 8; its multiples are every small-order point (the group is Z_L × Z_8).
const ORDER_8 = Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
const TORSION = Array.from({ length: 8 }, (_, i) => (i === 0 ? Point.ZERO : ORDER_8.multiply(BigInt(i))));

const check = (p: InstanceType<typeof Point>) => inPrimeOrderSubgroup(p, p.toAffine().y);

describe('inPrimeOrderSubgroup (one native X25519 multiplication)', () => {
  it('agrees with noble’s [L]·P = O on every torsion class, over many prime-order points and both signs', () => {
    expect(TORSION.map((t) => t.multiply(8n).is0())).toEqual(Array(8).fill(true));
    let accepted = 0;
    for (let i = 1n; i <= 60n; i++) {
      const base = Point.BASE.multiply(i * 0x9e3779b97f4a7c15n + 12345n);
      for (const pl of [base, base.negate()]) {
        for (const [k, t] of TORSION.entries()) {
          const p = pl.add(t);
          const want = p.isTorsionFree();
          expect(want).toBe(k === 0);
          expect(check(p)).toBe(want);
          if (want) accepted++;
        }
      }
    }
    expect(accepted).toBe(120);
  });

  it('refuses every small-order point itself, the identity included', () => {
    for (const t of TORSION) expect(check(t)).toBe(false);
  });

  it('accepts points of the form k·B for scalars near the edges (1, L − 1, powers of two)', () => {
    const L = Point.Fn.ORDER;
    for (const k of [1n, 2n, 5n, L - 1n, L - 5n, 1n << 200n, (1n << 252n) - 1n]) expect(check(Point.BASE.multiply(k))).toBe(true);
  });
});
