import { describe, expect, test } from 'bun:test';
import { escalatedFee, MIN_ESCALATION_STEP, percentileFee } from '../../src/domain/priority-fee.ts';

describe('percentileFee', () => {
  const fees = [0n, 100n, 5n, 40n, 1_000n, 20n, 7n, 300n];
  test('is the nearest-rank percentile of the fees, in any order', () => {
    expect(percentileFee(fees, 75, 1_000_000n)).toBe(100n);
    expect(percentileFee(fees, 50, 1_000_000n)).toBe(20n);
    expect(percentileFee(fees, 100, 1_000_000n)).toBe(1_000n);
    expect(percentileFee(fees, 0, 1_000_000n)).toBe(0n);
  });
  test('is capped, and 0 when recent blocks report nothing', () => {
    expect(percentileFee(fees, 100, 250n)).toBe(250n);
    expect(percentileFee([], 75, 1_000_000n)).toBe(0n);
  });
});

describe('escalatedFee', () => {
  test('doubles the expired price, at least by the minimum step', () => {
    expect(escalatedFee(0n, 0n, 1_000_000n)).toBe(MIN_ESCALATION_STEP);
    expect(escalatedFee(4_000n, 0n, 1_000_000n)).toBe(4_000n + MIN_ESCALATION_STEP);
    expect(escalatedFee(50_000n, 0n, 1_000_000n)).toBe(100_000n);
  });
  test('never offers less than the current estimate, nor more than the cap', () => {
    expect(escalatedFee(50_000n, 400_000n, 1_000_000n)).toBe(400_000n);
    expect(escalatedFee(800_000n, 0n, 1_000_000n)).toBe(1_000_000n);
    expect(escalatedFee(1_000_000n, 0n, 1_000_000n)).toBe(1_000_000n);
  });
});
