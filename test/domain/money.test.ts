import { describe, expect, test } from 'bun:test';
import { feeFor, formatUsdc, parseUsdc, toUsdcNumber } from '../../src/domain/money.ts';

/** The number a response shows must be the one its exact decimal string parses to. */
const viaString = (micro: bigint) => Number(formatUsdc(micro));

describe('toUsdcNumber', () => {
  test('equals the parsed exact decimal for edge amounts, on both sides of 2^53 micro', () => {
    const edges = [0n, 1n, -1n, 9n, 10n, 99_999n, 100_000n, 999_999n, 1_000_000n, 1_000_001n, 12_500_000n, 123_456_789n, 9_007_199_254_740_991n, -9_007_199_254_740_991n, 9_007_199_254_740_993n, 10n ** 20n + 7n];
    for (const m of edges) expect(toUsdcNumber(m)).toBe(viaString(m));
  });

  test('equals the parsed exact decimal for 200,000 random amounts of every magnitude', () => {
    const words = new BigUint64Array(200_000);
    crypto.getRandomValues(words);
    for (const [i, w] of words.entries()) {
      // Every magnitude from micro-cents to 2^60 micro, so both paths are crossed.
      const m = w >> BigInt(i % 61);
      expect(toUsdcNumber(m)).toBe(viaString(m));
    }
  });

  test('round-trips through parseUsdc for amounts of up to 15 significant digits', () => {
    for (const text of ['0.000001', '0.01', '12.5', '999999999.999999', '1000000', '123456789012345']) {
      const parsed = parseUsdc(text);
      if (!parsed.ok) throw new Error(parsed.reason);
      expect(parseUsdc(toUsdcNumber(parsed.micro))).toEqual(parsed);
    }
  });
});

describe('formatUsdc and feeFor', () => {
  test('formats the shortest exact decimal and rounds fees up to the micro-unit, never below the minimum', () => {
    expect([12_500_000n, 1n, 0n, -1_500_000n, 1_000_000n].map(formatUsdc)).toEqual(['12.5', '0.000001', '0', '-1.5', '1']);
    expect(feeFor(10_000n, 50n, 0n)).toBe(50n);
    expect(feeFor(10_001n, 50n, 0n)).toBe(51n);
    expect(feeFor(10_000n, 50n, 10_000n)).toBe(10_000n);
  });
});
