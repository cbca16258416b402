/** A master key's fingerprint: safe to store and show (a hash under its own label), enough to tell two keys apart. */
import { sha256 } from './sha256.ts';

export function masterKeyFingerprint(masterKey: Uint8Array): string {
  return Buffer.from(sha256('agent-wallet master key fingerprint v1', masterKey)).toString('hex').slice(0, 32);
}
