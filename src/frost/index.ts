/**
 * FROST(Ed25519, SHA-512) 2-of-2 building blocks shared by the server's coordinator and the agent's
 * client library: identities, protocol steps, wire formats, secret boxing and sealing at rest.
 * No I/O anywhere; only `dkgRound1`, `commit` and `seal` draw randomness. The caches that make
 * signing cheap (validated elements, decoded keys, sessions, native verification keys) are bounded
 * and hold public values, plus one-way digests of nonces (rfc9591.ts) and the fee payer's native
 * signing key (native-ed25519.ts).
 */
export { AGENT_ID, assertParticipant, otherParty, participantName, PARTICIPANTS, SERVER_ID, SIGNERS } from './ids.ts';
export type { Identifier } from './ids.ts';
export { Secret } from './secret.ts';
export { FrostProtocolError, FrostWireError, SealError } from './errors.ts';
export { decodeSecretState, encodeSecretState } from './codec.ts';
export { open, seal } from './seal.ts';
export type { DkgState, KeyPackage, PublicPackage, Round1Package, Round2Package, SigningCommitments, SigningNonces } from './types.ts';
export { assertCommitmentList, commitmentList } from './commitments.ts';
export { aggregate, commit, dkgRound1, dkgRound2, dkgRound3, samePublicPackage, signShare, verifyShare } from './party.ts';
export {
  decodeCommitments,
  decodePublicPackage,
  decodeRound1,
  decodeRound2,
  decodeSignatureShare,
  encodeCommitments,
  encodePublicPackage,
  encodeRound1,
  encodeRound2,
  encodeSignatureShare,
} from './wire.ts';
export type { CommitmentsWire, PublicPackageWire, Round1Wire, Round2Wire, SignatureShareWire } from './wire.ts';
