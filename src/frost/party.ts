/**
 * The protocol steps of one party of the 2-of-2 key — the agent's client and the server run the
 * same code. It adds what a 2-of-2 custody setting needs: secrets boxed in `Secret`, the other
 * party fixed by role, a commitment list of exactly {agent, server}, and errors that say who failed
 * and why (`FrostProtocolError`). Pure: no I/O, no clock, no storage.
 *
 * DKG: noble's `ed25519_FROST` Pedersen DKG with proofs of knowledge in round 1 (frost-core's
 * split-round API; RFC 9591 leaves DKG out of scope, Appendix C gives the VSS it builds on).
 * Signing: RFC 9591 §5 through rfc9591.ts, the same protocol at a fraction of noble's cost; every
 * aggregate is checked as a plain Ed25519 signature under the group key there.
 */
import { ed25519_FROST } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { assertCommitmentList } from './commitments.ts';
import { FrostProtocolError } from './errors.ts';
import { assertParticipant, otherParty, participantName, PARTICIPANTS, SIGNERS } from './ids.ts';
import type { Identifier } from './ids.ts';
import * as rfc9591 from './rfc9591.ts';
import { Secret } from './secret.ts';
import type { DkgState, KeyPackage, PublicPackage, Round1Package, Round2Package, SigningCommitments, SigningNonces } from './types.ts';

const frost = ed25519_FROST;

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function selfOf(state: DkgState): Identifier {
  return bytesToHex(frost.utils.Fn.toBytes(state.identifier));
}

/**
 * DKG round 1 for participant `self`: a random degree-1 polynomial, its VSS commitment and a proof
 * of knowledge of its constant term. `pkg` goes to the other party; `state` stays secret and is
 * mutated by the following rounds (persist it again after each one).
 */
export function dkgRound1(self: Identifier): { pkg: Round1Package; state: Secret<DkgState> } {
  assertParticipant(self);
  const { public: pkg, secret } = frost.DKG.round1(self, { ...SIGNERS });
  return { pkg, state: new Secret(secret) };
}

/**
 * DKG round 2: verifies the other party's proof of knowledge (refusing rogue-key contributions)
 * and computes the secret share for it. Repeating the call with the same round-1 package returns
 * the same share; a different package is refused.
 */
export function dkgRound2(state: Secret<DkgState>, otherRound1: Round1Package): { forOther: Round2Package } {
  const other = otherParty(selfOf(state.reveal()));
  if (otherRound1.identifier !== other) throw new FrostProtocolError(`round-1 package must come from the ${participantName(other)}`);
  let out: Record<string, Round2Package>;
  try {
    out = frost.DKG.round2(state.reveal(), [otherRound1]);
  } catch (err) {
    throw new FrostProtocolError(`the ${participantName(other)}'s round-1 package is refused: ${reason(err)}`, { cause: err, culprits: [other] });
  }
  const forOther = out[other];
  if (forOther === undefined) throw new FrostProtocolError(`round 2 produced no package for the ${participantName(other)}`);
  return { forOther };
}

/**
 * DKG round 3: checks the other party's share against its round-1 commitment and derives this
 * party's key. `otherRound1` must be the package given to round 2. `groupKey` (32 bytes) is the
 * wallet's Solana address. On success the DKG state is consumed; on failure it is kept.
 */
export function dkgRound3(
  state: Secret<DkgState>,
  otherRound1: Round1Package,
  round2ForMe: Round2Package,
): { keyPackage: Secret<KeyPackage>; publicPackage: PublicPackage; groupKey: Uint8Array } {
  const other = otherParty(selfOf(state.reveal()));
  if (round2ForMe.identifier !== other) throw new FrostProtocolError(`round-2 package must come from the ${participantName(other)}`);
  let key: KeyPackage;
  try {
    key = frost.DKG.round3(state.reveal(), [otherRound1], [round2ForMe]);
  } catch (err) {
    // noble's message for a share that fails VSS verification (RFC 9591 Appendix C.2 vss_verify).
    if (reason(err) === 'invalid secret share') {
      throw new FrostProtocolError(`the ${participantName(other)}'s round-2 share does not match its round-1 commitment`, { cause: err, culprits: [other] });
    }
    throw new FrostProtocolError(`DKG round 3 failed: ${reason(err)}`, { cause: err });
  }
  const groupKey = key.public.commitments[0];
  if (groupKey === undefined) throw new FrostProtocolError('DKG produced no group key');
  return { keyPackage: new Secret(key), publicPackage: key.public, groupKey: groupKey.slice() };
}

/**
 * Whether two public packages describe the same key. Compares canonically: noble lists
 * `verifyingShares` in a different key order on each side, so object equality would mislead.
 */
export function samePublicPackage(a: PublicPackage, b: PublicPackage): boolean {
  if (a.signers.min !== b.signers.min || a.signers.max !== b.signers.max) return false;
  if (a.commitments.length !== b.commitments.length) return false;
  if (a.commitments.some((c, i) => bytesToHex(c) !== bytesToHex(b.commitments[i]!))) return false;
  const ids = Object.keys(a.verifyingShares).sort();
  if (ids.join() !== Object.keys(b.verifyingShares).sort().join()) return false;
  return ids.every((id) => bytesToHex(a.verifyingShares[id]!) === bytesToHex(b.verifyingShares[id]!));
}

/**
 * RFC 9591 §5.1 commit: fresh hiding and binding nonces and their commitments. The nonces MUST be
 * used for at most one signature share and MUST NOT be reused across sessions.
 */
export function commit(keyPackage: Secret<KeyPackage>): { nonces: Secret<SigningNonces>; commitments: SigningCommitments } {
  const { nonces, commitments } = rfc9591.commit(keyPackage.reveal().secret);
  return { nonces: new Secret(nonces), commitments };
}

/**
 * RFC 9591 §5.2 sign: this party's signature share over `message`. Refuses unless the commitment
 * list is exactly {agent, server} and carries this party's own commitments for `nonces`. Zeroes
 * the nonces on success, so a second call with the same nonces throws.
 */
export function signShare(
  keyPackage: Secret<KeyPackage>,
  nonces: Secret<SigningNonces>,
  commitmentList: readonly SigningCommitments[],
  message: Uint8Array,
): Uint8Array {
  assertCommitmentList(commitmentList);
  const key = keyPackage.reveal();
  try {
    return rfc9591.signShare(key.secret, key.public, nonces.reveal(), commitmentList, message);
  } catch (err) {
    throw new FrostProtocolError(`refusing to sign: ${reason(err)}`, { cause: err });
  }
}

/** RFC 9591 §5.4: whether `share` is participant `id`'s valid share over `message` for this list. */
export function verifyShare(
  publicPackage: PublicPackage,
  commitmentList: readonly SigningCommitments[],
  message: Uint8Array,
  id: Identifier,
  share: Uint8Array,
): boolean {
  assertParticipant(id);
  assertCommitmentList(commitmentList);
  return rfc9591.verifyShare(publicPackage, commitmentList, message, id, share);
}

/**
 * RFC 9591 §5.3 aggregate: the 64-byte Ed25519 signature (R ‖ z) from both shares, verified as a
 * plain RFC 8032 Ed25519 signature under the group key — what Solana checks. When it does not
 * verify, names the culprit(s) in `FrostProtocolError.culprits`.
 */
export function aggregate(
  publicPackage: PublicPackage,
  commitmentList: readonly SigningCommitments[],
  message: Uint8Array,
  shares: Readonly<Record<Identifier, Uint8Array>>,
): Uint8Array {
  assertCommitmentList(commitmentList);
  const ids = Object.keys(shares).sort();
  if (ids.join() !== [...PARTICIPANTS].sort().join()) throw new FrostProtocolError('aggregation needs exactly one share from the agent and one from the server');
  try {
    return rfc9591.aggregate(publicPackage, commitmentList, message, shares);
  } catch (err) {
    const culprits = err instanceof rfc9591.AggregateError ? err.cheaters : [];
    const who = culprits.map(participantName).join(' and ');
    throw new FrostProtocolError(who ? `invalid signature share from the ${who}` : `aggregation failed: ${reason(err)}`, { cause: err, culprits });
  }
}
