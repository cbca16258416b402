/** The agent's half of a signing round, step by step, for tests that stop between the steps. */
import type { ApiClient } from '../../src/client/api.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';

/** The agent key package of a profile. */
export function agentKey(profile: ProfileData): Secret<KeyPackage> {
  return new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
}

/** Pays, confirms and completes the FROST round, so the server stores the signed bytes — without submitting. */
export async function signWithoutSubmit(api: ApiClient, profile: ProfileData, params: Record<string, unknown>): Promise<string> {
  const intent = await api.call<{ transaction_id: string }>('bot', 'pay', params);
  await api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
  const key = agentKey(profile);
  const { nonces, commitments } = commit(key);
  const init = await api.call<{ server_commitments: unknown; message: string }>('bot', 'frost_sign_init', { transaction_id: intent.transaction_id, commitments: encodeCommitments(commitments) });
  const share = signShare(key, nonces, commitmentList(commitments, decodeCommitments(init.server_commitments, SERVER_ID)), new Uint8Array(Buffer.from(init.message, 'base64')));
  await api.call('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, signature_share: encodeSignatureShare(AGENT_ID, share) });
  return intent.transaction_id;
}
