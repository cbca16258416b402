/**
 * The agent side of registration (DESIGN §4): a FROST DKG with the server as participant 2,
 * then both parties sign the registration proof message and the server checks the aggregate
 * under the new address. The agent verifies the server's result at every step: the group key
 * must equal its own, and the proof message must be exactly the one it expects.
 */
import { getAddressDecoder } from '@solana/kit';
import { encodeSecretState } from '../frost/codec.ts';
import { commitmentList } from '../frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../frost/ids.ts';
import { aggregate, commit, dkgRound1, dkgRound2, dkgRound3, samePublicPackage, signShare } from '../frost/party.ts';
import {
  decodeCommitments,
  decodePublicPackage,
  decodeRound1,
  decodeRound2,
  decodeSignatureShare,
  encodeCommitments,
  encodePublicPackage,
  encodeRound1,
  encodeRound2,
} from '../frost/wire.ts';
import { registrationProofMessage } from '../domain/registration-proof.ts';
import type { ApiClient } from './api.ts';
import { pinsFromPing, type PingAnswer } from './custody.ts';
import { CustodyCheckError } from './errors.ts';
import type { ProfileData } from './profile.ts';

export interface RegisterParams {
  name: string;
  owner_email?: string;
  agent_model?: string;
  description?: string;
  metadata?: Record<string, unknown>;
}

export { CustodyCheckError };

/** Runs dkg_init → dkg_complete → register; returns the register response and the profile to save. */
export async function registerWallet(
  api: ApiClient,
  params: RegisterParams,
  progress: (step: string) => void = () => {},
): Promise<{ response: Record<string, unknown>; profile: ProfileData; proof: { message: Uint8Array; signature: Uint8Array } }> {
  progress('generating key share (FROST DKG round 1)');
  const mine = dkgRound1(AGENT_ID);
  const init = await api.call<{ dkg_session_id: string; round1: unknown; round2: unknown }>('bot', 'dkg_init', { round1: encodeRound1(mine.pkg) });
  const serverRound1 = decodeRound1(init.round1, SERVER_ID);
  const serverRound2 = decodeRound2(init.round2, SERVER_ID);
  progress('exchanging shares (rounds 2 and 3)');
  const { forOther } = dkgRound2(mine.state, serverRound1);
  const result = dkgRound3(mine.state, serverRound1, serverRound2);
  const address = getAddressDecoder().decode(result.groupKey);
  const { nonces, commitments } = commit(result.keyPackage);
  const done = await api.call<{ address: string; public_package: unknown; proof: { message: string; server_commitments: unknown; server_share: unknown } }>('bot', 'dkg_complete', {
    dkg_session_id: init.dkg_session_id,
    round2: encodeRound2(forOther),
    commitments: encodeCommitments(commitments),
  });
  if (done.address !== address || !samePublicPackage(decodePublicPackage(done.public_package), result.publicPackage)) {
    throw new CustodyCheckError('the server derived another group key than this agent; nothing was registered');
  }
  const expected = registrationProofMessage(init.dkg_session_id, address);
  if (Buffer.from(done.proof.message, 'base64').compare(Buffer.from(expected)) !== 0) {
    throw new CustodyCheckError('the server asked to sign something other than the registration proof; refused');
  }
  progress('signing the registration proof');
  const list = commitmentList(commitments, decodeCommitments(done.proof.server_commitments, SERVER_ID));
  const agentShare = signShare(result.keyPackage, nonces, list, expected);
  const signature = aggregate(result.publicPackage, list, expected, {
    [AGENT_ID]: agentShare,
    [SERVER_ID]: decodeSignatureShare(done.proof.server_share, SERVER_ID),
  });
  const response = await api.call<Record<string, unknown>>('bot', 'register', {
    dkg_session_id: init.dkg_session_id,
    proof_signature: Buffer.from(signature).toString('hex'),
    ...params,
  });
  const profile: ProfileData = {
    version: 1,
    server_url: api.baseUrl,
    wallet_id: String(response.wallet_id),
    username: String(response.username),
    address,
    network: String(response.network),
    api_key: String(response.api_key),
    key_package: Buffer.from(encodeSecretState(result.keyPackage.reveal())).toString('base64'),
    public_package: encodePublicPackage(result.publicPackage),
    created_at: new Date().toISOString(),
    // Pinned now, while the server is the one the agent chose to trust: later answers are held to these.
    custody: pinsFromPing(String(response.network), await api.call<PingAnswer>('bot', 'ping'), new Date(), 'registration'),
  };
  return { response, profile, proof: { message: expected, signature } };
}
