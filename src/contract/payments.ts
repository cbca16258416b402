/**
 * Contract of the spending, signing, history and event actions (SPEC "Bot actions, spending",
 * "history, guard rails, events"; DESIGN §3–§5, §9).
 */
import { Type as T } from '@sinclair/typebox';
import { Amount, Id, Limit, Offset, Params } from './common.ts';
import { action } from './action.ts';
import { Commitments } from './wallet.ts';

/** The agent's round-one commitments carried by pay / confirm_payment / confirm_withdrawal (the fast path, DESIGN §6.2). */
export const FastCommitments = T.Object(Commitments.properties, {
  additionalProperties: false,
  description: "the agent's FROST round-one commitments, as frost_sign_init takes them: when the transaction can be signed now, the answer opens the signing round",
});

/** Parameters of `events`, on /bot and /merchant alike. */
export const FeedParams = Params({
  types: T.Optional(T.Array(T.String({ maxLength: 64 }), { maxItems: 30 })),
  limit: T.Optional(Limit),
  unread_only: T.Optional(T.Boolean()),
  since: T.Optional(T.String({ maxLength: 64, description: 'an event_id or an ISO 8601 time: only newer events' })),
  wait_seconds: T.Optional(T.Integer({ minimum: 0, maximum: 30, description: 'long poll: wait up to this many seconds for a new event' })),
});

/** Parameters of `mark_read`, on /bot and /merchant alike. */
export const MarkReadParams = Params({ event_ids: T.Optional(T.Array(Id('event'), { minItems: 1, maxItems: 500 })), all: T.Optional(T.Boolean()) });

export const TX_STATUSES = ['pre_approved', 'awaiting_approval', 'approved', 'rejected', 'pending', 'completed', 'failed', 'expired', 'cancelled'] as const;
const TxId = Id('transaction', 'transaction_id from pay, withdraw or x402_prepare');
const Recipient = T.String({ minLength: 1, maxLength: 64, description: 'a username (wallet or merchant) or a Solana address' });

export const PAYMENTS = {
  lookup: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({ username: Recipient }),
    summary: 'Tells whether a recipient exists: found, type (wallet or merchant), name.',
  }),
  can_i_afford: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({ to: Recipient, amount: Amount }),
    summary: 'Dry run of pay: balance and guard rails; answers can_pay, will_auto_approve, fee, total and the rule that decided.',
  }),
  pay: action({
    endpoint: 'bot',
    auth: 'bot',
    idempotent: true,
    destructive: true,
    params: Params({
      to: T.Optional(Recipient),
      amount: T.Optional(Amount),
      payment_request_id: T.Optional(Id('paymentRequest')),
      note: T.Optional(T.String({ maxLength: 500 })),
      reference: T.Optional(T.String({ minLength: 1, maxLength: 100 })),
      commitments: T.Optional(FastCommitments),
    }),
    // A retry may carry fresh commitments (a new signing round): the intent is the same request.
    idempotencyIgnores: ['commitments'],
    summary:
      'Creates a payment intent (to and amount, or payment_request_id); returns transaction_id and status pre_approved, awaiting_approval or rejected. With commitments and status pre_approved, also the message to sign, its summary and the server commitments (sign_session_id): one round trip instead of confirm_payment + frost_sign_init.',
  }),
  confirm_payment: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({ transaction_id: TxId, commitments: T.Optional(FastCommitments) }),
    summary:
      'Builds the Solana message of a pre_approved or approved payment and returns it for signing, with a summary to check. With commitments, also opens the signing round (as frost_sign_init) in the same answer.',
  }),
  frost_sign_init: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({ transaction_id: TxId, commitments: Commitments }),
    summary: 'Signing round 1: takes the agent commitments, returns the server commitments for the stored message.',
  }),
  frost_sign_complete: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({
      transaction_id: TxId,
      sign_session_id: T.Optional(Id('signSession')),
      signature_share: T.Object({ identifier: T.String({ pattern: '^[0-9a-f]{64}$' }), share: T.String({ pattern: '^[0-9a-f]{64}$' }) }, { additionalProperties: false }),
      submit: T.Optional(T.Boolean({ description: 'also send the signed transaction to Solana, as submit_signed_tx, and answer with the transaction' })),
      wait: T.Optional(T.Boolean({ description: 'with submit: wait up to 30 s for the chain outcome' })),
    }),
    summary: 'Signing round 2: takes the agent signature share; the server aggregates and stores the signed transaction (with submit: true, also sends it).',
  }),
  submit_signed_tx: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({ transaction_id: TxId, wait: T.Optional(T.Boolean({ description: 'wait up to 30 s for the chain outcome' })) }),
    summary: 'Sends the signed transaction to Solana (idempotent: the same bytes every time).',
  }),
  list_payments: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({ status: T.Optional(T.Union(TX_STATUSES.map((s) => T.Literal(s)))), limit: T.Optional(Limit), offset: T.Optional(Offset) }),
    summary: 'Outgoing payments, newest first.',
  }),
  cancel_payment: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({ transaction_id: TxId }),
    summary: 'Cancels a payment that is pre_approved, approved or awaiting_approval; releases its budget.',
  }),
  transactions: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({
      type: T.Optional(T.Union(['payment_out', 'payment_in', 'deposit', 'withdrawal', 'x402', 'fee', 'in', 'out'].map((s) => T.Literal(s)))),
      limit: T.Optional(Limit),
      offset: T.Optional(Offset),
    }),
    summary: 'History of every movement: payments in and out, deposits, withdrawals, x402, fees.',
  }),
  events: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: FeedParams,
    summary: 'The wallet event feed, oldest first after `since`.',
  }),
  mark_read: action({
    endpoint: 'bot',
    auth: 'bot',
    params: MarkReadParams,
    summary: 'Marks events as read: event_ids, or all: true.',
  }),
};
