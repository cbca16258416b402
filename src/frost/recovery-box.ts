/**
 * The agent's enrollment report travels through the daemon sealed to the owner (DESIGN §4.1): an
 * X25519 key the owner made on its own machine and handed to the agent out of band in the
 * enrollment code. Sealing is HPKE's base mode in spirit, on noble's X25519 and HKDF-SHA256 with
 * AES-256-GCM: a fresh ephemeral key per box, the key schedule bound to both public keys, and the
 * wallet and enrollment ids as associated data, so a box is refused for any other wallet or
 * enrollment. The daemon never sees the owner's public key (it is only in the code), so it can
 * neither read a box nor forge one.
 *
 * Enrollment code: `awr1-<wallet_id>-<enrollment_id>-<owner public key, base58>-<checksum>`, the
 * checksum the first 4 bytes of SHA-256 over the rest, hex: a mistyped code is refused before use.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { x25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { SealError } from './errors.ts';

const INFO = 'agent-wallet recovery box v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

export interface EnrollmentCode {
  walletId: string;
  enrollmentId: string;
  ownerPublicKey: Uint8Array;
}

function checksum(body: string): string {
  return bytesToHex(sha256(utf8ToBytes(body))).slice(0, 8);
}

/** The code the owner hands to the agent's machine. */
export function formatEnrollmentCode(c: EnrollmentCode): string {
  const body = `awr1-${c.walletId}-${c.enrollmentId}-${getBase58Decoder().decode(c.ownerPublicKey)}`;
  return `${body}-${checksum(body)}`;
}

/** Parses and checks an enrollment code; throws naming what is wrong. */
export function parseEnrollmentCode(code: string): EnrollmentCode {
  const parts = code.trim().split('-');
  if (parts.length !== 5 || parts[0] !== 'awr1') throw new SealError('not an enrollment code: it starts with awr1- and has five parts');
  const [, walletId, enrollmentId, key, sum] = parts as [string, string, string, string, string];
  if (checksum(parts.slice(0, 4).join('-')) !== sum) throw new SealError('the enrollment code is mistyped (its checksum does not match)');
  let ownerPublicKey: Uint8Array;
  try {
    ownerPublicKey = new Uint8Array(getBase58Encoder().encode(key));
  } catch {
    throw new SealError("the enrollment code's key is not base58");
  }
  if (ownerPublicKey.length !== KEY_BYTES) throw new SealError("the enrollment code's key is not 32 bytes");
  return { walletId, enrollmentId, ownerPublicKey };
}

/** A fresh X25519 key pair for one enrollment, made on the owner's machine. */
export function enrollmentKeyPair(): { secretKey: Uint8Array; publicKey: Uint8Array } {
  const secretKey = x25519.utils.randomSecretKey();
  return { secretKey, publicKey: x25519.getPublicKey(secretKey) };
}

function aadOf(walletId: string, enrollmentId: string): Buffer {
  return Buffer.from(`${INFO}|${walletId}|${enrollmentId}`, 'utf8');
}

function keyOf(shared: Uint8Array, ephemeral: Uint8Array, recipient: Uint8Array, aad: Buffer): Uint8Array {
  if (shared.every((b) => b === 0)) throw new SealError('the key exchange gave the all-zero secret (a low-order public key)');
  return hkdf(sha256, shared, concatBytes(ephemeral, recipient), concatBytes(utf8ToBytes(INFO), aad), KEY_BYTES);
}

/** Seals `plaintext` to the owner's public key for one wallet and enrollment: `ephemeral(32) ‖ nonce(12) ‖ ciphertext ‖ tag(16)`. */
export function sealToOwner(ownerPublicKey: Uint8Array, walletId: string, enrollmentId: string, plaintext: Uint8Array): Uint8Array {
  const eph = x25519.utils.randomSecretKey();
  const ephemeral = x25519.getPublicKey(eph);
  const aad = aadOf(walletId, enrollmentId);
  const key = keyOf(x25519.getSharedSecret(eph, ownerPublicKey), ephemeral, ownerPublicKey, aad);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  key.fill(0);
  eph.fill(0);
  return concatBytes(ephemeral, nonce, body, cipher.getAuthTag());
}

/** Opens a box with the owner's secret key; throws SealError for any other key, wallet, enrollment or a changed byte. */
export function openAsOwner(secretKey: Uint8Array, walletId: string, enrollmentId: string, box: Uint8Array): Uint8Array {
  if (box.length < KEY_BYTES + NONCE_BYTES + TAG_BYTES) throw new SealError('the box is truncated');
  const ephemeral = box.subarray(0, KEY_BYTES);
  const nonce = box.subarray(KEY_BYTES, KEY_BYTES + NONCE_BYTES);
  const body = box.subarray(KEY_BYTES + NONCE_BYTES, box.length - TAG_BYTES);
  const tag = box.subarray(box.length - TAG_BYTES);
  const aad = aadOf(walletId, enrollmentId);
  let key: Uint8Array;
  try {
    key = keyOf(x25519.getSharedSecret(secretKey, ephemeral), ephemeral, x25519.getPublicKey(secretKey), aad);
  } catch (err) {
    throw err instanceof SealError ? err : new SealError('the box has no valid key exchange');
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return new Uint8Array(Buffer.concat([decipher.update(body), decipher.final()]));
  } catch {
    throw new SealError('the box does not open: not sealed to this key, for this wallet and enrollment, or changed on the way');
  } finally {
    key.fill(0);
  }
}
