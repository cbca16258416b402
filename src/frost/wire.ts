/**
 * JSON wire formats of every FROST value that crosses HTTP, as lowercase hex strings.
 *
 * Each `decodeX(json, …)` is strict: exactly the listed keys, canonical lowercase hex of the exact
 * length, elements valid per RFC 9591 §3.1 (on the curve, prime-order subgroup, not the identity),
 * scalars below the group order, and the `identifier` equal to the one the caller expects — the
 * caller takes it from the authenticated channel (API key / session), never from the body, so a
 * body claiming another identity is refused. Errors are `FrostWireError(field, message)` with the
 * JSON path of the offending value. `encodeX` is the exact inverse.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { FrostWireError } from './errors.ts';
import { elementProblem, ELEMENT_BYTES, scalarProblem, SCALAR_BYTES, verifyingShareFor } from './group.ts';
import { participantName, PARTICIPANTS, SIGNERS } from './ids.ts';
import type { Identifier } from './ids.ts';
import type { PublicPackage, Round1Package, Round2Package, SigningCommitments } from './types.ts';

/** DKG round 1 on the wire: VSS commitment (2 points) and the 64-byte proof of knowledge (R ‖ z). */
export type Round1Wire = { identifier: string; commitment: string[]; proof_of_knowledge: string };

/** DKG round 2 on the wire: the sender's secret share for the recipient (32-byte scalar). */
export type Round2Wire = { identifier: string; signing_share: string };

/** The DKG result both parties must agree on. `group_public_key` equals `commitments[0]`. */
export type PublicPackageWire = { group_public_key: string; commitments: string[]; verifying_shares: Record<string, string> };

/** Signing round one on the wire (RFC 9591 §5.1). */
export type CommitmentsWire = { identifier: string; hiding: string; binding: string };

/** Signing round two on the wire (RFC 9591 §5.2): one 32-byte signature share. */
export type SignatureShareWire = { identifier: string; share: string };

const HEX = /^[0-9a-f]*$/;

function object(json: unknown, at: string, keys: readonly string[]): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new FrostWireError(at, 'must be an object');
  const record = json as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!keys.includes(key)) throw new FrostWireError(`${at}.${key}`, 'is not an allowed field');
  }
  for (const key of keys) {
    if (!Object.hasOwn(record, key)) throw new FrostWireError(`${at}.${key}`, 'is required');
  }
  return record;
}

function hex(value: unknown, at: string, bytes: number): Uint8Array {
  if (typeof value !== 'string') throw new FrostWireError(at, 'must be a hex string');
  if (!HEX.test(value)) throw new FrostWireError(at, 'must be lowercase hex');
  if (value.length !== bytes * 2) throw new FrostWireError(at, `must be ${bytes} bytes (${bytes * 2} hex characters), got ${value.length} characters`);
  return hexToBytes(value);
}

function element(value: unknown, at: string): Uint8Array {
  const bytes = hex(value, at, ELEMENT_BYTES);
  const problem = elementProblem(bytes);
  if (problem !== null) throw new FrostWireError(at, problem);
  return bytes;
}

function scalar(value: unknown, at: string): Uint8Array {
  const bytes = hex(value, at, SCALAR_BYTES);
  const problem = scalarProblem(bytes);
  if (problem !== null) throw new FrostWireError(at, problem);
  return bytes;
}

function identifier(value: unknown, at: string, expected: Identifier): Identifier {
  if (value !== expected) throw new FrostWireError(at, `must be the ${participantName(expected)}'s identifier ${expected}`);
  return expected;
}

function vssCommitment(value: unknown, at: string): Uint8Array[] {
  if (!Array.isArray(value) || value.length !== SIGNERS.min) throw new FrostWireError(at, `must be an array of ${SIGNERS.min} points`);
  return value.map((item, i) => element(item, `${at}[${i}]`));
}

/** Encodes a DKG round-1 package. */
export function encodeRound1(pkg: Round1Package): Round1Wire {
  return { identifier: pkg.identifier, commitment: pkg.commitment.map(bytesToHex), proof_of_knowledge: bytesToHex(pkg.proofOfKnowledge) };
}

/** Decodes the round-1 package of `expected`; the proof itself is checked by `dkgRound2`. */
export function decodeRound1(json: unknown, expected: Identifier, at = 'round1'): Round1Package {
  const o = object(json, at, ['identifier', 'commitment', 'proof_of_knowledge']);
  const id = identifier(o.identifier, `${at}.identifier`, expected);
  const commitment = vssCommitment(o.commitment, `${at}.commitment`);
  const proof = hex(o.proof_of_knowledge, `${at}.proof_of_knowledge`, ELEMENT_BYTES + SCALAR_BYTES);
  const rProblem = elementProblem(proof.subarray(0, ELEMENT_BYTES));
  if (rProblem !== null) throw new FrostWireError(`${at}.proof_of_knowledge`, `R ${rProblem}`);
  const zProblem = scalarProblem(proof.subarray(ELEMENT_BYTES));
  if (zProblem !== null) throw new FrostWireError(`${at}.proof_of_knowledge`, `z ${zProblem}`);
  return { identifier: id, commitment, proofOfKnowledge: proof } as Round1Package;
}

/** Encodes a DKG round-2 package (carries a secret share: send only over TLS). */
export function encodeRound2(pkg: Round2Package): Round2Wire {
  return { identifier: pkg.identifier, signing_share: bytesToHex(pkg.signingShare) };
}

/** Decodes the round-2 package sent by `expected`; its share is checked against the VSS commitment by `dkgRound3`. */
export function decodeRound2(json: unknown, expected: Identifier, at = 'round2'): Round2Package {
  const o = object(json, at, ['identifier', 'signing_share']);
  const id = identifier(o.identifier, `${at}.identifier`, expected);
  return { identifier: id, signingShare: scalar(o.signing_share, `${at}.signing_share`) } as Round2Package;
}

/** Encodes the key's public package. */
export function encodePublicPackage(pub: PublicPackage): PublicPackageWire {
  const shares: Record<string, string> = {};
  for (const id of PARTICIPANTS) {
    const share = pub.verifyingShares[id];
    if (share === undefined) throw new TypeError(`public package lacks the ${participantName(id)}'s verifying share`);
    shares[id] = bytesToHex(share);
  }
  const commitments = pub.commitments.map(bytesToHex);
  const [groupKey] = commitments;
  if (groupKey === undefined) throw new TypeError('public package has no commitments');
  return { group_public_key: groupKey, commitments, verifying_shares: shares };
}

/**
 * Decodes a 2-of-2 public package: the group VSS commitment, `group_public_key` equal to its first
 * point, and a verifying share for exactly the agent and the server, each equal to the commitment
 * evaluated at that identifier (RFC 9591 Appendix C.2) — so the package is internally consistent.
 */
export function decodePublicPackage(json: unknown, at = 'public_package'): PublicPackage {
  const o = object(json, at, ['group_public_key', 'commitments', 'verifying_shares']);
  const commitments = vssCommitment(o.commitments, `${at}.commitments`);
  const groupKey = element(o.group_public_key, `${at}.group_public_key`);
  if (bytesToHex(groupKey) !== bytesToHex(commitments[0]!)) throw new FrostWireError(`${at}.group_public_key`, 'must equal commitments[0]');
  const shares = object(o.verifying_shares, `${at}.verifying_shares`, PARTICIPANTS);
  const verifyingShares: Record<Identifier, Uint8Array> = {};
  for (const id of PARTICIPANTS) {
    const share = element(shares[id], `${at}.verifying_shares.${id}`);
    if (bytesToHex(share) !== bytesToHex(verifyingShareFor(commitments, id))) {
      throw new FrostWireError(`${at}.verifying_shares.${id}`, `is not the ${participantName(id)}'s share of these commitments`);
    }
    verifyingShares[id] = share;
  }
  return { signers: { min: SIGNERS.min, max: SIGNERS.max }, commitments, verifyingShares } as PublicPackage;
}

/** Encodes one party's signing commitments. */
export function encodeCommitments(c: SigningCommitments): CommitmentsWire {
  return { identifier: c.identifier, hiding: bytesToHex(c.hiding), binding: bytesToHex(c.binding) };
}

/** Decodes the signing commitments of `expected`. */
export function decodeCommitments(json: unknown, expected: Identifier, at = 'commitments'): SigningCommitments {
  const o = object(json, at, ['identifier', 'hiding', 'binding']);
  const id = identifier(o.identifier, `${at}.identifier`, expected);
  return { identifier: id, hiding: element(o.hiding, `${at}.hiding`), binding: element(o.binding, `${at}.binding`) } as SigningCommitments;
}

/** Encodes the signature share of `id`. */
export function encodeSignatureShare(id: Identifier, share: Uint8Array): SignatureShareWire {
  return { identifier: id, share: bytesToHex(share) };
}

/** Decodes the signature share of `expected` to its 32 scalar bytes; `verifyShare` checks its value. */
export function decodeSignatureShare(json: unknown, expected: Identifier, at = 'signature_share'): Uint8Array {
  const o = object(json, at, ['identifier', 'share']);
  identifier(o.identifier, `${at}.identifier`, expected);
  return scalar(o.share, `${at}.share`);
}
