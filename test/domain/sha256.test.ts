import { expect, test } from 'bun:test';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { sha256 } from '../../src/domain/sha256.ts';

test('the FIPS 180-2 vector: sha256("abc")', () => {
  expect(bytesToHex(sha256('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('the digest of the parts concatenated, as noble computes it: strings as UTF-8, byte views by their own range', () => {
  const buffer = Uint8Array.from({ length: 96 }, (_, i) => i * 7);
  const view = buffer.subarray(16, 48);
  const cases: (Uint8Array | string)[][] = [[''], [view], ['décision ✓'], [new Uint8Array(32), '["wal_x",1,2,"k","{}"]'], [view, 'ü', view]];
  for (const parts of cases) {
    const bytes = concatBytes(...parts.map((p) => (typeof p === 'string' ? utf8ToBytes(p) : p)));
    expect(bytesToHex(sha256(...parts))).toBe(bytesToHex(nobleSha256(bytes)));
  }
});
