/**
 * Authenticated encryption of secrets at rest (server shares, DKG state, nonces; DESIGN §4) with
 * AES-256-GCM under the operator's 32-byte master key.
 *
 * Sealed format, version 1: `0x01 ‖ nonce (12 random bytes) ‖ ciphertext ‖ tag (16 bytes)`.
 * `aad` binds the ciphertext to its place (e.g. `"wallet:<id>:share"`): a blob copied to another
 * row or wallet fails to open. Synchronous on purpose, so callers can seal and open inside a
 * synchronous `bun:sqlite` transaction. A random 96-bit nonce per seal keeps the NIST SP 800-38D
 * bound (2^32 seals per key) far beyond this service's volume.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SealError } from './errors.ts';

const VERSION = 1;
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + NONCE_BYTES;

function checkKey(masterKey: Uint8Array): void {
  if (!(masterKey instanceof Uint8Array) || masterKey.length !== KEY_BYTES) throw new SealError(`master key must be ${KEY_BYTES} bytes`);
}

/** Encrypts and authenticates `plaintext` bound to `aad`; see the module comment for the format. */
export function seal(masterKey: Uint8Array, plaintext: Uint8Array, aad: string): Uint8Array {
  checkKey(masterKey);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', masterKey, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const out = new Uint8Array(HEADER_BYTES + body.length + TAG_BYTES);
  out[0] = VERSION;
  out.set(nonce, 1);
  out.set(body, HEADER_BYTES);
  out.set(cipher.getAuthTag(), HEADER_BYTES + body.length);
  return out;
}

/**
 * Decrypts a blob made by `seal` with the same key and `aad`. Throws `SealError` — and releases no
 * plaintext — on a wrong key, a different `aad`, any flipped byte, truncation or an unknown version.
 */
export function open(masterKey: Uint8Array, sealed: Uint8Array, aad: string): Uint8Array {
  checkKey(masterKey);
  if (!(sealed instanceof Uint8Array) || sealed.length < HEADER_BYTES + TAG_BYTES) throw new SealError('sealed data is truncated');
  if (sealed[0] !== VERSION) throw new SealError(`sealed data has unknown version ${sealed[0]}`);
  const nonce = sealed.subarray(1, HEADER_BYTES);
  const body = sealed.subarray(HEADER_BYTES, sealed.length - TAG_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  let head: Buffer | undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', masterKey, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    head = decipher.update(body);
    const tail = decipher.final();
    const plain = new Uint8Array(head.length + tail.length);
    plain.set(head, 0);
    plain.set(tail, head.length);
    tail.fill(0);
    return plain;
  } catch {
    throw new SealError('cannot open sealed data: wrong key, wrong associated data, or tampered');
  } finally {
    head?.fill(0);
  }
}
