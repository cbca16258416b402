/**
 * A Schnorr proof that the caller holds a key package's signing share s (of verifying share Y = s·B),
 * bound to one wallet's refresh: a refresh commit carries it, so holding the bot API key alone
 * cannot switch the daemon to a refreshed key no agent holds (DESIGN §4.1). Pure: no I/O; only
 * `proveShare` draws randomness.
 *
 * Proof = R ‖ z (64 bytes) with R = r·B for a fresh random r, c = SHA-512(tag ‖ R ‖ Y ‖ group key ‖
 * wallet id ‖ refresh id) mod L (ids length-prefixed), z = r + c·s; it holds when z·B = R + c·Y, R
 * is a canonical element of the prime-order subgroup (not the identity) and z is below L.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { baseElement, decodeElement, elementProblem, scalarProblem } from './group.ts';
import type { Identifier } from './ids.ts';
import { randomScalar } from './recovery-share.ts';
import { sha512, toScalar } from './rfc9591.ts';
import type { Secret } from './secret.ts';
import type { KeyPackage, PublicPackage } from './types.ts';

const Point = ed25519.Point;
const Fn = Point.Fn;

const TAG = utf8ToBytes('agent-wallet refresh share proof v1');

/** Length of a proof: R (32) ‖ z (32). */
export const SHARE_PROOF_BYTES = 64;

/** What a proof is bound to: a proof for one refresh of one wallet proves nothing for another. */
export interface ShareProofContext {
  walletId: string;
  refreshId: string;
}

function lengthPrefixed(text: string): Uint8Array {
  const bytes = utf8ToBytes(text);
  return concatBytes(Uint8Array.of(bytes.length >> 8, bytes.length & 0xff), bytes);
}

function challenge(r: Uint8Array, y: Uint8Array, groupKey: Uint8Array, context: ShareProofContext): bigint {
  return toScalar(sha512(TAG, r, y, groupKey, lengthPrefixed(context.walletId), lengthPrefixed(context.refreshId)));
}

/** The proof (R ‖ z) that the holder of `key` knows its signing share, for `context`. */
export function proveShare(key: Secret<KeyPackage>, context: ShareProofContext): Uint8Array {
  const k = key.reveal();
  const s = Fn.fromBytes(k.secret.signingShare);
  const y = k.public.verifyingShares[k.secret.identifier];
  if (!y) throw new Error("the key package lists no verifying share for its own identifier");
  const r = randomScalar();
  const rBytes = baseElement(r);
  const z = Fn.add(r, Fn.mul(challenge(rBytes, y, k.public.commitments[0]!, context), s));
  return concatBytes(rBytes, Fn.toBytes(z));
}

/**
 * Why `proof` does not show that its maker holds the signing share of participant `id` in `pub`
 * for `context`, or `null` when it does. `pub` must be the verifier's own copy of the key.
 */
export function shareProofProblem(pub: PublicPackage, id: Identifier, proof: Uint8Array, context: ShareProofContext): string | null {
  if (proof.length !== SHARE_PROOF_BYTES) return `must be ${SHARE_PROOF_BYTES} bytes (R ‖ z)`;
  const y = pub.verifyingShares[id];
  const groupKey = pub.commitments[0];
  if (!y || !groupKey) return 'the key has no verifying share for this participant';
  const rBytes = proof.subarray(0, 32);
  const zBytes = proof.subarray(32);
  const rProblem = elementProblem(rBytes);
  if (rProblem) return `R ${rProblem}`;
  const zProblem = scalarProblem(zBytes);
  if (zProblem) return `z ${zProblem}`;
  const c = challenge(rBytes, y, groupKey, context);
  // Public values only: variable-time multiplication is fine, and accepts z or c of zero.
  const left = Point.BASE.multiplyUnsafe(Fn.fromBytes(zBytes));
  const right = decodeElement(rBytes).add(decodeElement(y, 'verifying share').multiplyUnsafe(c));
  return left.equals(right) ? null : 'does not prove the signing share of this key';
}
