/**
 * Contract of the owner API (DESIGN §7): `POST {base_url}/owner` with
 * `Authorization: Bearer wallet_owner_…`. Everything the dashboard does is an action here, so
 * automation (a chat bot that approves) needs no scraping. An owner sees only their own wallets:
 * anything else is NOT_FOUND.
 */
import { Type as T } from '@sinclair/typebox';
import { Id, Limit, Offset, Params } from './common.ts';
import { action } from './action.ts';
import { PAYLINK_STATUSES } from './earning.ts';

const WalletId = Id('wallet', 'one of your wallets (see wallets)');
const ApprovalId = Id('approval', 'from approvals');

/** The statuses an approval moves through. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'cancelled', 'expired'] as const;

export const OWNER = {
  wallets: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({ limit: T.Optional(Limit), offset: T.Optional(Offset) }),
    summary: 'Your claimed wallets, newest claim first, with the number of pending approvals of each.',
  }),
  get_guard_rails: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({ wallet_id: WalletId }),
    summary: 'The guard rails in force and a pending loosening with the time it applies (apply_at).',
  }),
  set_guard_rails: action({
    endpoint: 'owner',
    auth: 'owner',
    params: Params({
      wallet_id: WalletId,
      rails: T.Object(
        {},
        {
          additionalProperties: true,
          description:
            'the whole desired guard-rails document (fields as get_guard_rails returns them; an absent field does not restrict). Tightening applies now; loosening applies after loosen_delay_hours.',
        },
      ),
    }),
    summary: 'Replaces the guard rails: what tightens applies at once, what loosens applies after the current loosen_delay_hours.',
  }),
  approvals: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({
      wallet_id: T.Optional(WalletId),
      status: T.Optional(T.Union(APPROVAL_STATUSES.map((s) => T.Literal(s)), { description: 'default: every status' })),
      limit: T.Optional(Limit),
      offset: T.Optional(Offset),
    }),
    summary: 'Approvals of your wallets, newest first.',
  }),
  approve: action({
    endpoint: 'owner',
    auth: 'owner',
    destructive: true,
    params: Params({ approval_id: ApprovalId }),
    summary: 'Approves a pending approval: its payment or withdrawal becomes approved (confirmable by the agent).',
  }),
  reject: action({
    endpoint: 'owner',
    auth: 'owner',
    params: Params({ approval_id: ApprovalId }),
    summary: 'Rejects a pending approval: its payment or withdrawal becomes rejected.',
  }),
  fund_requests: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({
      wallet_id: T.Optional(WalletId),
      status: T.Optional(T.Union([T.Literal('open'), T.Literal('fulfilled'), T.Literal('declined')])),
      limit: T.Optional(Limit),
      offset: T.Optional(Offset),
    }),
    summary: "Fund requests of your wallets (agents' request_funds), newest first, each with its fund page (fund_url: deposit address and Solana Pay QR code).",
  }),
  paylinks: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({
      wallet_id: T.Optional(WalletId),
      status: T.Optional(T.Union(PAYLINK_STATUSES.map((s) => T.Literal(s)))),
      limit: T.Optional(Limit),
      offset: T.Optional(Offset),
    }),
    summary: "Paylinks of your wallets (agents' create_payment_request), newest first, each with its checkout page (url); status open lists those a payer can still pay.",
  }),
  resolve_fund_request: action({
    endpoint: 'owner',
    auth: 'owner',
    params: Params({
      fund_request_id: Id('fundRequest'),
      decision: T.Union([T.Literal('fulfilled'), T.Literal('declined')]),
      reason: T.Optional(T.String({ minLength: 1, maxLength: 200, description: 'only with decision "declined": why, in a line (trimmed, 1–200 characters); the agent reads it in the fund_request.declined event and the audit log keeps it' })),
    }),
    summary: 'Marks an open fund request fulfilled or declined (a deposit covering it fulfils it by itself), optionally with the reason for a decline; the agent gets a fund_request.fulfilled or fund_request.declined event (data.reason: the owner\'s reason).',
  }),
  audit_log: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({ wallet_id: WalletId, limit: T.Optional(Limit), offset: T.Optional(Offset) }),
    summary: 'The append-only audit log of a wallet, newest first: guard-rail changes, approval decisions, claims.',
  }),
  tokens: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({}),
    summary: 'Your owner API tokens (never the secret), newest first; current marks the one making this call.',
  }),
  revoke_token: action({
    endpoint: 'owner',
    auth: 'owner',
    params: Params({ token_id: Id('ownerToken', 'from tokens') }),
    summary: 'Revokes one of your owner API tokens (the one making the call too, if you name it).',
  }),
};
