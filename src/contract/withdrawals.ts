/** Contract of withdrawals to external Solana addresses (SPEC "Bot actions, funding and withdrawals"). */
import { Type as T } from '@sinclair/typebox';
import { Amount, Id, Params, SolanaAddress } from './common.ts';
import { action } from './action.ts';
import { FastCommitments } from './payments.ts';

export const WITHDRAWALS = {
  withdraw: action({
    endpoint: 'bot',
    auth: 'bot',
    idempotent: true,
    destructive: true,
    params: Params({ amount: Amount, to_address: SolanaAddress, reason: T.String({ minLength: 1, maxLength: 500 }) }),
    summary: 'Asks to withdraw USDC to an external Solana address; always waits for owner approval. Honours X-Idempotency-Key.',
  }),
  confirm_withdrawal: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({ transaction_id: Id('transaction', 'transaction_id of the withdrawal'), commitments: T.Optional(FastCommitments) }),
    summary:
      'After owner approval: builds the Solana message of the withdrawal for signing (then frost_sign_init / frost_sign_complete / submit_signed_tx; with commitments, the answer opens the signing round as frost_sign_init).',
  }),
  get_withdrawal: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({ withdrawal_id: Id('withdrawal') }),
    summary: 'A withdrawal with its transaction status.',
  }),
};
