import { describe, expect, test } from 'bun:test';
import { jsonText } from '../../src/domain/json.ts';
import { rng } from '../helpers/random.ts';

/** The rule jsonText keeps: JSON.stringify with every bigint written as its decimal string. */
const reference = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));

describe('jsonText', () => {
  test('writes exactly what stringify with the bigint replacer writes, for 3,000 random values with and without bigints', () => {
    const random = rng(20261125);
    const leaf = (withBigints: boolean): unknown => {
      const r = random();
      if (withBigints && r < 0.2) return BigInt(Math.floor(random() * 2 ** 53)) * 1000n - 7n;
      if (r < 0.4) return Math.floor(random() * 1e9) / 100;
      if (r < 0.6) return `s${Math.floor(random() * 1e6)}"\\\n`;
      if (r < 0.7) return null;
      if (r < 0.8) return random() < 0.5;
      return undefined;
    };
    const value = (depth: number, withBigints: boolean): unknown => {
      if (depth > 3 || random() < 0.3) return leaf(withBigints);
      if (random() < 0.3) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1, withBigints));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, (_, i) => [`k${i}`, value(depth + 1, withBigints)]));
    };
    for (let i = 0; i < 3_000; i++) {
      const v = value(0, i % 2 === 0);
      expect(jsonText(v)).toBe(reference(v));
    }
    expect(jsonText({ amount: 10_000n, nested: [1n, { fee: 0n }] })).toBe('{"amount":"10000","nested":["1",{"fee":"0"}]}');
  });

  test('a value stringify cannot write still throws (a cycle)', () => {
    const cyclic: Record<string, unknown> = { a: 1n };
    cyclic.self = cyclic;
    expect(() => jsonText(cyclic)).toThrow(TypeError);
  });
});
