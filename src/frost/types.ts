/**
 * Names for noble's FROST structures as this service uses them, after frost-core's typing by round
 * (RFC 9591 §5): public packages cross the wire (wire.ts); secret ones live only inside `Secret`.
 */
import type { DKG_Round1, DKG_Round2, DKG_Secret, FrostPublic, Key, NonceCommitments, Nonces } from '@noble/curves/abstract/frost.js';

/** DKG round 1 broadcast: VSS commitment (2 points) and proof of knowledge of the secret coefficient. */
export type Round1Package = DKG_Round1;

/** DKG round 2 message for one recipient: the sender's polynomial evaluated at the recipient. SECRET in transit (TLS). */
export type Round2Package = DKG_Round2;

/** A party's DKG state between rounds (bigint coefficients). SECRET; persist with codec.ts + seal.ts. */
export type DkgState = DKG_Secret;

/** The key's public part: group VSS commitment (`commitments[0]` is the group key) and both verifying shares. */
export type PublicPackage = FrostPublic;

/** One party's long-lived key: its signing share plus the public package. SECRET. */
export type KeyPackage = Key;

/** RFC 9591 §5.1 round-one output sent to the coordinator: hiding and binding nonce commitments. */
export type SigningCommitments = NonceCommitments;

/** RFC 9591 §5.1 hiding and binding nonces. SECRET and single use: signing zeroes them. */
export type SigningNonces = Nonces;
