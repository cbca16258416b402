/** The enrollment code and the box that carries the agent's report to the owner through the daemon. */
import { describe, expect, test } from 'bun:test';
import { SealError } from '../../src/frost/errors.ts';
import { enrollmentKeyPair, formatEnrollmentCode, openAsOwner, parseEnrollmentCode, sealToOwner } from '../../src/frost/recovery-box.ts';

describe('enrollment code', () => {
  test('round-trips; a mistyped character or a foreign prefix is refused before use', () => {
    const { publicKey } = enrollmentKeyPair();
    const code = formatEnrollmentCode({ walletId: 'wal_abc', enrollmentId: 'rce_xyz', ownerPublicKey: publicKey });
    expect(parseEnrollmentCode(code)).toEqual({ walletId: 'wal_abc', enrollmentId: 'rce_xyz', ownerPublicKey: publicKey });
    const flip = code.slice(0, 25) + (code[25] === 'a' ? 'b' : 'a') + code.slice(26);
    expect(() => parseEnrollmentCode(flip)).toThrow(/mistyped|base58|32 bytes/);
    expect(() => parseEnrollmentCode(code.replace('awr1', 'awr2'))).toThrow(/not an enrollment code/);
  });
});

describe('box to the owner', () => {
  const plaintext = new TextEncoder().encode('sigma and points');
  test("opens only with the owner's key, for the same wallet and enrollment, unchanged", () => {
    const owner = enrollmentKeyPair();
    const other = enrollmentKeyPair();
    const box = sealToOwner(owner.publicKey, 'wal_1', 'rce_1', plaintext);
    expect(openAsOwner(owner.secretKey, 'wal_1', 'rce_1', box)).toEqual(plaintext);
    expect(() => openAsOwner(other.secretKey, 'wal_1', 'rce_1', box)).toThrow(SealError);
    expect(() => openAsOwner(owner.secretKey, 'wal_2', 'rce_1', box)).toThrow(SealError);
    expect(() => openAsOwner(owner.secretKey, 'wal_1', 'rce_2', box)).toThrow(SealError);
    const flipped = Uint8Array.from(box);
    flipped[50]! ^= 1;
    expect(() => openAsOwner(owner.secretKey, 'wal_1', 'rce_1', flipped)).toThrow(SealError);
    expect(() => openAsOwner(owner.secretKey, 'wal_1', 'rce_1', box.subarray(0, 40))).toThrow(/truncated/);
  });

  test('two boxes of the same plaintext differ (fresh ephemeral key and nonce)', () => {
    const owner = enrollmentKeyPair();
    expect(sealToOwner(owner.publicKey, 'w', 'e', plaintext)).not.toEqual(sealToOwner(owner.publicKey, 'w', 'e', plaintext));
  });

  test('a low-order ephemeral key is refused', () => {
    const owner = enrollmentKeyPair();
    const box = sealToOwner(owner.publicKey, 'w', 'e', plaintext);
    box.fill(0, 0, 32);
    expect(() => openAsOwner(owner.secretKey, 'w', 'e', box)).toThrow(SealError);
  });
});
