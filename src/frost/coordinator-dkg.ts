/**
 * The server side of registration's key generation (DESIGN §4). The server is participant 2;
 * the agent's identity is fixed as participant 1 (nothing in a body can change who is who).
 *
 * dkg_init:     agent round 1 → server round 1 + round 2 (after checking the agent's proof of knowledge)
 * dkg_complete: agent round 2 + agent signing commitments → server round 3 → group key = address;
 *               the server commits and signs its share of the registration proof message
 * register:     (src/actions/wallet.ts) checks the aggregated proof signature under the address.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { getAddressDecoder } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import { newId } from '../contract/ids.ts';
import { registrationProofMessage } from '../domain/registration-proof.ts';
import { AAD } from './aad.ts';
import { decodeSecretState, encodeSecretState } from './codec.ts';
import { FrostProtocolError, FrostWireError, SealError } from './errors.ts';
import { AGENT_ID, SERVER_ID } from './ids.ts';
import { commitmentList } from './commitments.ts';
import type { DkgLedger, DkgSession } from './dkg-ledger.ts';
import { commit, dkgRound1, dkgRound2, dkgRound3, signShare } from './party.ts';
import { open, seal } from './seal.ts';
import { Secret } from './secret.ts';
import type { DkgState, KeyPackage } from './types.ts';
import {
  decodeCommitments,
  decodeRound1,
  decodeRound2,
  encodeCommitments,
  encodePublicPackage,
  encodeRound1,
  encodeRound2,
  encodeSignatureShare,
  type CommitmentsWire,
  type PublicPackageWire,
  type Round1Wire,
  type Round2Wire,
  type SignatureShareWire,
} from './wire.ts';

/** A DKG session lives 10 minutes. */
export const DKG_SESSION_TTL_MS = 10 * 60 * 1000;

export interface DkgDeps {
  dkgLedger: DkgLedger;
  masterKey: Uint8Array;
  now: () => Date;
}

/** Turns a refusal of the FROST layer into a VALIDATION_ERROR naming the field. */
function refuse(err: unknown, field: string): never {
  if (err instanceof FrostWireError) throw invalid(`/${err.field.replaceAll('.', '/')}`, err.message.slice(err.field.length + 2), 'Send the package exactly as the FROST client produced it.');
  if (err instanceof FrostProtocolError) throw invalid(field, err.message, 'Start a new key generation with a fresh dkg_init.');
  throw err;
}

function canonicalRound1Hash(wire: Round1Wire): Uint8Array {
  return sha256(new TextEncoder().encode(JSON.stringify([wire.identifier, wire.commitment, wire.proof_of_knowledge])));
}

export interface DkgInitResult {
  dkg_session_id: string;
  round1: Round1Wire;
  round2: Round2Wire;
  expires_at: string;
}

/** dkg_init: verifies the agent's round-1 package and answers the server's round 1 and round 2. */
export async function startDkg(deps: DkgDeps, round1Json: unknown): Promise<DkgInitResult> {
  let agentRound1;
  try {
    agentRound1 = decodeRound1(round1Json, AGENT_ID, 'round1');
  } catch (err) {
    refuse(err, '/round1');
  }
  const server = dkgRound1(SERVER_ID);
  let forAgent;
  try {
    forAgent = dkgRound2(server.state, agentRound1).forOther;
  } catch (err) {
    refuse(err, '/round1');
  }
  const id = newId('dkgSession');
  const now = deps.now().getTime();
  const expires = now + DKG_SESSION_TTL_MS;
  const wire = encodeRound1(agentRound1);
  const inserted = await deps.dkgLedger.startSession({
    dkg_session_id: id,
    state: seal(deps.masterKey, encodeSecretState(server.state.reveal()), AAD.dkgState(id)),
    client_round1: JSON.stringify(wire),
    client_round1_hash: canonicalRound1Hash(wire),
    created_at: now,
    expires_at: expires,
  });
  if (!inserted) throw invalid('/round1', 'this round-1 package was already used', 'Generate a fresh round-1 package for every key generation.');
  return { dkg_session_id: id, round1: encodeRound1(server.pkg), round2: encodeRound2(forAgent), expires_at: new Date(expires).toISOString() };
}

/** Loads a session that exists and has not expired; anything else is NOT_FOUND. */
export async function liveDkgSession(deps: DkgDeps, id: string): Promise<DkgSession> {
  const row = await deps.dkgLedger.session(id);
  if (!row || Number(row.expires_at) < deps.now().getTime()) {
    throw new AppError('NOT_FOUND', 'DKG session not found or expired.', { howToFix: 'Start a new key generation with dkg_init; a session lasts 10 minutes.' });
  }
  return row;
}

export interface DkgCompleteResult {
  address: string;
  group_public_key: string;
  public_package: PublicPackageWire;
  proof: { message: string; server_commitments: CommitmentsWire; server_share: SignatureShareWire };
}

/**
 * dkg_complete: checks the agent's round-2 share, derives the server's key package (sealed), and
 * signs the server's share of the registration proof with the agent's commitments.
 */
export async function completeDkg(deps: DkgDeps, id: string, round2Json: unknown, commitmentsJson: unknown): Promise<DkgCompleteResult> {
  const row = await liveDkgSession(deps, id);
  if (row.status !== 'started') throw invalid('/dkg_session_id', 'this DKG session was already completed; sessions are single use', 'Start a new key generation with dkg_init.');
  let agentRound2;
  let agentCommitments;
  try {
    agentRound2 = decodeRound2(round2Json, AGENT_ID, 'round2');
    agentCommitments = decodeCommitments(commitmentsJson, AGENT_ID, 'commitments');
  } catch (err) {
    refuse(err, '/round2');
  }
  let state: Secret<DkgState>;
  try {
    state = new Secret(decodeSecretState(open(deps.masterKey, row.state, AAD.dkgState(id))) as DkgState);
  } catch (err) {
    if (err instanceof SealError) throw new AppError('INTERNAL_ERROR', 'The DKG session state cannot be opened.');
    throw err;
  }
  const agentRound1 = decodeRound1(JSON.parse(row.client_round1), AGENT_ID);
  let result;
  try {
    result = dkgRound3(state, agentRound1, agentRound2);
  } catch (err) {
    refuse(err, '/round2');
  }
  const address = getAddressDecoder().decode(result.groupKey);
  const message = registrationProofMessage(id, address);
  const { nonces, commitments } = commit(result.keyPackage);
  let share: Uint8Array;
  try {
    share = signShare(result.keyPackage, nonces, commitmentList(agentCommitments, commitments), message);
  } catch (err) {
    refuse(err, '/commitments');
  }
  const publicPackage = encodePublicPackage(result.publicPackage);
  const completed = await deps.dkgLedger.completeSession(id, seal(deps.masterKey, encodeSecretState(result.keyPackage.reveal()), AAD.dkgKey(id)), JSON.stringify(publicPackage), address);
  if (!completed) throw invalid('/dkg_session_id', 'this DKG session was already completed; sessions are single use', 'Start a new key generation with dkg_init.');
  return {
    address,
    group_public_key: bytesToHex(result.groupKey),
    public_package: publicPackage,
    proof: { message: Buffer.from(message).toString('base64'), server_commitments: encodeCommitments(commitments), server_share: encodeSignatureShare(SERVER_ID, share) },
  };
}

/** Opens the server key package a completed session holds (for registration to re-seal under the wallet id). */
export function completedKeyPackage(deps: DkgDeps, row: DkgSession): Uint8Array {
  if (row.status !== 'completed' || !row.result) {
    throw invalid('/dkg_session_id', row.status === 'used' ? 'this DKG session already created a wallet' : 'this DKG session is not completed yet', 'Run dkg_init and dkg_complete, then register.');
  }
  return open(deps.masterKey, row.result, AAD.dkgKey(row.dkg_session_id));
}

/** Opens a wallet's sealed server key package; a share copied from another wallet fails here. */
export function walletKeyPackage(masterKey: Uint8Array, walletId: string, sealed: Uint8Array): Secret<KeyPackage> {
  return new Secret(decodeSecretState(open(masterKey, sealed, AAD.walletKey(walletId))) as KeyPackage);
}
