/** Secret boxing, sealing at rest and the secret-state codec. */
import { describe, expect, test } from 'bun:test';
import { bytesToHex } from '@noble/hashes/utils.js';
import { commit, decodeSecretState, encodeSecretState, open, seal, SealError, Secret } from '../../src/frost/index.ts';
import { dkgPair } from './helpers.ts';

describe('Secret', () => {
  const { agent } = dkgPair();
  const nonces = commit(agent.keyPackage).nonces;
  const shareHex = bytesToHex(agent.keyPackage.reveal().secret.signingShare);

  test('prints <redacted> through JSON.stringify, String, template literals and Bun.inspect', () => {
    expect(JSON.stringify(agent.keyPackage)).toBe('"<redacted>"');
    expect(JSON.stringify({ key: agent.keyPackage, nonces })).toBe('{"key":"<redacted>","nonces":"<redacted>"}');
    expect(String(nonces)).toBe('<redacted>');
    expect(`${agent.keyPackage}`).toBe('<redacted>');
    expect(Bun.inspect(agent.keyPackage)).toBe('<redacted>');
    const nested = Bun.inspect({ wallet: { share: agent.keyPackage, nonces: [nonces] } });
    expect(nested).toContain('<redacted>');
    expect(nested).not.toContain(shareHex.slice(0, 8));
    expect(nested).not.toMatch(/\d+,\s*\d+,\s*\d+/);
  });

  test('reveal returns the boxed value itself', () => {
    const value = { a: 1n };
    expect(new Secret(value).reveal()).toBe(value);
  });
});

describe('seal / open', () => {
  const key = new Uint8Array(32).map((_, i) => i);
  const plaintext = new TextEncoder().encode('server share of wal_1');
  const sealed = seal(key, plaintext, 'wallet:wal_1:share');

  test('round-trips under the same key and associated data', () => {
    expect(new TextDecoder().decode(open(key, sealed, 'wallet:wal_1:share'))).toBe('server share of wal_1');
    expect(sealed[0]).toBe(1);
    expect(sealed.length).toBe(1 + 12 + plaintext.length + 16);
  });

  test('uses a fresh nonce each time', () => {
    expect(bytesToHex(seal(key, plaintext, 'a'))).not.toBe(bytesToHex(seal(key, plaintext, 'a')));
  });

  test('refuses another wallet\'s associated data', () => {
    expect(() => open(key, sealed, 'wallet:wal_2:share')).toThrow(SealError);
  });

  test('refuses a wrong key', () => {
    const wrong = key.slice();
    wrong[31]! ^= 1;
    expect(() => open(wrong, sealed, 'wallet:wal_1:share')).toThrow(SealError);
  });

  test('refuses a flipped byte anywhere: version, nonce, ciphertext or tag', () => {
    for (const at of [0, 1, 12, 13, sealed.length - 17, sealed.length - 1]) {
      const tampered = sealed.slice();
      tampered[at]! ^= 0x40;
      expect(() => open(key, tampered, 'wallet:wal_1:share')).toThrow(SealError);
    }
  });

  test('refuses truncated data and a master key that is not 32 bytes', () => {
    expect(() => open(key, sealed.subarray(0, 28), 'wallet:wal_1:share')).toThrow(SealError);
    expect(() => seal(key.subarray(0, 16), plaintext, 'x')).toThrow(SealError);
  });
});

describe('secret-state codec', () => {
  test('round-trips bigints, byte arrays, nested records and optional fields exactly', () => {
    const value = { identifier: 2n, coefficients: [0n, 2n ** 252n + 1n, -5n], bytes: new Uint8Array([0, 255, 7]), empty: new Uint8Array(0), step: 2, flag: true, none: null, map: { '01ab': { x: 'y' } } };
    expect(decodeSecretState(encodeSecretState(value))).toEqual(value);
  });

  test('round-trips signing nonces and a key package', () => {
    const { agent } = dkgPair();
    const key = agent.keyPackage.reveal();
    expect(decodeSecretState(encodeSecretState(key))).toEqual(key);
    const nonces = commit(agent.keyPackage).nonces.reveal();
    expect(decodeSecretState(encodeSecretState(nonces))).toEqual(nonces);
  });

  test('refuses values it could not restore exactly', () => {
    expect(() => encodeSecretState(new Secret(1))).toThrow(/plain objects/);
    expect(() => encodeSecretState({ a: undefined })).toThrow(/value\.a: undefined cannot be encoded/);
    expect(() => encodeSecretState({ $bigint: '1' })).toThrow(/reserved/);
    expect(() => encodeSecretState(Number.NaN)).toThrow(/non-finite/);
    expect(() => encodeSecretState(new Map())).toThrow(/plain objects/);
  });

  test('refuses bytes that are not its format', () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(() => decodeSecretState(enc('not json'))).toThrow(/not UTF-8 JSON/);
    expect(() => decodeSecretState(enc('{"v":2,"value":1}'))).toThrow(/format version/);
    expect(() => decodeSecretState(enc('{"v":1,"value":{"$bigint":"1.5"}}'))).toThrow(/malformed \$bigint/);
    expect(() => decodeSecretState(enc('{"v":1,"value":{"$bytes":"abc"}}'))).toThrow(/malformed \$bytes/);
    expect(() => decodeSecretState(enc('{"v":1,"value":{"__proto__":{"x":1}}}'))).toThrow(/reserved key/);
  });
});
