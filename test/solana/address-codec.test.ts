import { describe, expect, test } from 'bun:test';
import { getAddressDecoder, getAddressEncoder, type Address } from '@solana/kit';
import { addressBytes, addressBytesView, addressOf } from '../../src/solana/address-codec.ts';
import { rng } from '../helpers/random.ts';

describe('address codec', () => {
  test("answers as kit's codec both ways for 5,000 random keys (leading zero bytes included), asked twice each", () => {
    const random = rng(20261125);
    for (let i = 0; i < 5_000; i++) {
      const bytes = Uint8Array.from({ length: 32 }, (_, k) => (k < i % 4 ? 0 : Math.floor(random() * 256)));
      const kit = getAddressDecoder().decode(bytes);
      // The second call of each pair is answered from the memo.
      for (let twice = 0; twice < 2; twice++) {
        expect(addressOf(bytes)).toBe(kit);
        expect([...addressBytes(kit)]).toEqual([...bytes]);
        expect([...addressBytesView(kit)]).toEqual([...new Uint8Array(getAddressEncoder().encode(kit))]);
      }
    }
  });

  test('reads 32 bytes where they sit in a larger buffer', () => {
    const message = Uint8Array.from({ length: 100 }, (_, k) => k);
    const slice = message.subarray(7, 39);
    expect(addressOf(slice)).toBe(getAddressDecoder().decode(slice));
  });

  test('a copy changed by its caller changes nothing the next caller gets', () => {
    const address = getAddressDecoder().decode(new Uint8Array(32).fill(9));
    const copy = addressBytes(address);
    copy.fill(0);
    expect([...addressBytes(address)]).toEqual(new Array(32).fill(9));
    expect([...addressBytesView(address)]).toEqual(new Array(32).fill(9));
  });

  test('refuses what is not an address, as kit does, every time it is asked', () => {
    for (const bad of ['', 'not-base58-0OIl', '1111', `${'z'.repeat(44)}`]) {
      expect(() => addressBytes(bad)).toThrow();
      expect(() => addressBytes(bad)).toThrow();
    }
    expect(() => addressOf(new Uint8Array(31))).toThrow();
  });

  test('past its bound the memo drops its oldest entries and still answers right', () => {
    const random = rng(7);
    const first = Uint8Array.from({ length: 32 }, () => Math.floor(random() * 256));
    const firstAddress = addressOf(first);
    for (let i = 0; i < 5_000; i++) addressOf(Uint8Array.from({ length: 32 }, () => Math.floor(random() * 256)));
    expect(addressOf(first)).toBe(firstAddress);
    expect([...addressBytes(firstAddress as Address)]).toEqual([...first]);
  });
});
