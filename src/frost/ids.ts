/**
 * The two participants of every wallet's 2-of-2 FROST(Ed25519, SHA-512) key.
 * Identifiers are noble's canonical serialization: the 32-byte little-endian scalar as lowercase hex
 * (RFC 9591 §3.1 SerializeScalar). They are fixed by role, never chosen by a request body.
 */
import { ed25519_FROST } from '@noble/curves/ed25519.js';
import type { Identifier, Signers } from '@noble/curves/abstract/frost.js';

export type { Identifier } from '@noble/curves/abstract/frost.js';

/** Participant 1: the agent, i.e. the client library holding its share in its profile. */
export const AGENT_ID: Identifier = ed25519_FROST.Identifier.fromNumber(1);

/** Participant 2: the server, holding its share encrypted at rest. */
export const SERVER_ID: Identifier = ed25519_FROST.Identifier.fromNumber(2);

/** Both parties are needed to sign, and there are exactly two (RFC 9591 §2: MIN = MAX = 2). */
export const SIGNERS: Readonly<Signers> = Object.freeze({ min: 2, max: 2 });

/** The participant set in RFC 9591 order (ascending identifier). */
export const PARTICIPANTS: readonly Identifier[] = Object.freeze([AGENT_ID, SERVER_ID]);

/** Human name of a participant for error messages ("agent", "server"); never a secret. */
export function participantName(id: Identifier): string {
  if (id === AGENT_ID) return 'agent';
  if (id === SERVER_ID) return 'server';
  return `unknown participant ${id}`;
}

/** Throws unless `id` is the agent or the server: no other identifier belongs to a 2-of-2 key. */
export function assertParticipant(id: Identifier): void {
  if (id !== AGENT_ID && id !== SERVER_ID) throw new Error(`not a participant of this key: ${id}`);
}

/** The other party of the 2-of-2 key. Throws for an identifier that is neither. */
export function otherParty(id: Identifier): Identifier {
  assertParticipant(id);
  return id === AGENT_ID ? SERVER_ID : AGENT_ID;
}
