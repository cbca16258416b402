/**
 * Contract of the custody and wallet actions (SPEC "Bot actions without authentication" and
 * "Bot actions, wallet"; DESIGN §4). FROST packages are validated strictly by src/frost/wire.ts
 * after the shape check here.
 */
import { Type as T } from '@sinclair/typebox';
import { Id, NoParams, Params } from './common.ts';
import { action } from './action.ts';

const Hex = (bytes: number, description: string) => T.String({ pattern: `^[0-9a-f]{${bytes * 2}}$`, description });

export const Round1Package = T.Object(
  {
    identifier: Hex(32, 'the agent FROST identifier (participant 1)'),
    commitment: T.Array(Hex(32, 'VSS commitment point'), { minItems: 2, maxItems: 2 }),
    proof_of_knowledge: Hex(64, 'Schnorr proof of knowledge of the constant term (R ‖ z)'),
  },
  { additionalProperties: false, description: 'FROST DKG round-1 package (RFC 9591 Appendix C)' },
);

export const Round2Package = T.Object(
  { identifier: Hex(32, 'the sender (agent) identifier'), signing_share: Hex(32, 'secret share for the server') },
  { additionalProperties: false, description: 'FROST DKG round-2 package: the agent secret share for the server' },
);

export const Commitments = T.Object(
  { identifier: Hex(32, 'the signer identifier'), hiding: Hex(32, 'hiding nonce commitment'), binding: Hex(32, 'binding nonce commitment') },
  { additionalProperties: false, description: 'FROST signing commitments (RFC 9591 §5.1)' },
);

const Name = T.String({ minLength: 1, maxLength: 256, description: 'display name, 1–64 visible characters' });
const Email = T.String({ minLength: 3, maxLength: 254, description: 'e-mail address' });
const DkgSessionId = Id('dkgSession', 'from dkg_init');

export const WALLET = {
  dkg_init: action({
    endpoint: 'bot',
    auth: 'none',
    params: Params({ round1: Round1Package }),
    summary: 'Starts the FROST key generation: takes the agent round-1 package, returns the server round-1 and round-2 packages.',
  }),
  dkg_complete: action({
    endpoint: 'bot',
    auth: 'none',
    params: Params({ dkg_session_id: DkgSessionId, round2: Round2Package, commitments: Commitments }),
    summary:
      'Finishes the key generation: takes the agent round-2 package and signing commitments; returns the group public key (the wallet address) and the server half of the registration proof.',
  }),
  register: action({
    endpoint: 'bot',
    auth: 'none',
    params: Params({
      dkg_session_id: DkgSessionId,
      proof_signature: Hex(64, 'the aggregated FROST signature of the registration proof message (R ‖ z)'),
      name: Name,
      owner_email: T.Optional(Email),
      agent_model: T.Optional(T.String({ minLength: 1, maxLength: 100 })),
      description: T.Optional(T.String({ maxLength: 1000 })),
      metadata: T.Optional(T.Record(T.String({ maxLength: 64 }), T.Unknown(), { description: 'JSON object, at most 4 KiB' })),
    }),
    summary: 'Creates the wallet for a completed key generation; returns the API key (shown once), username, claim URL and claim code.',
    destructive: true,
  }),
  info: action({ endpoint: 'bot', auth: 'bot', allowUnclaimed: true, readOnly: true, params: NoParams, summary: 'Wallet metadata, status and claim information.' }),
  update_owner: action({
    endpoint: 'bot',
    auth: 'bot',
    allowUnclaimed: true,
    params: Params({ owner_email: Email }),
    summary: 'Sets the pledged owner e-mail; unclaimed wallets only.',
  }),
  update_name: action({ endpoint: 'bot', auth: 'bot', allowUnclaimed: true, params: Params({ name: Name }), summary: 'Renames the wallet.' }),
  balance: action({ endpoint: 'bot', auth: 'bot', readOnly: true, params: NoParams, summary: 'On-chain USDC balance, budget and remaining allowance.' }),
  reconcile: action({ endpoint: 'bot', auth: 'bot', readOnly: true, params: NoParams, summary: 'Re-reads the on-chain USDC balance now (bypassing the short balance cache) with the token account and whether it exists.' }),
  get_deposit_address: action({ endpoint: 'bot', auth: 'bot', readOnly: true, params: NoParams, summary: 'The wallet Solana address and USDC token account for deposits.' }),
  wallet_export: action({
    endpoint: 'bot',
    auth: 'bot',
    params: NoParams,
    summary: 'Registers a fresh file key for a .wlt export; returns export_id, import_token and the key that encrypts the file.',
  }),
  wallet_import_key: action({
    endpoint: 'bot',
    auth: 'none',
    params: Params({ export_id: Id('export'), import_token: T.String({ minLength: 20, maxLength: 100 }) }),
    summary: 'Returns the decryption key of a .wlt export file (at most 5 times in 24 hours).',
  }),
};
