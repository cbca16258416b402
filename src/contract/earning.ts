/**
 * Contract of earning and funding (SPEC "Bot actions, earning", "funding", "Public endpoint": pay,
 * pay_status; DESIGN §8, §9): paylinks with a web checkout and Solana Pay, invitations, and fund
 * requests to the owner.
 */
import { Type as T } from '@sinclair/typebox';
import { Amount, Id, Limit, Offset, Params } from './common.ts';
import { action } from './action.ts';

export const PAYLINK_STATUSES = ['open', 'paid', 'cancelled', 'expired'] as const;
export const FUND_REQUEST_STATUSES = ['open', 'fulfilled', 'declined'] as const;
/** Most lines of an itemised paylink. */
export const MAX_ITEMS = 50;
/** Invitations per paylink per hour. */
export const INVITATIONS_PER_HOUR = 20;
/** Invitations per payee (wallet or merchant) per hour, over all its paylinks (e-mail is not a free spam channel). */
export const INVITATIONS_PER_WALLET_PER_HOUR = 100;

const RequestId = Id('paymentRequest', 'request_id from create_payment_request');
const Reference = T.String({ minLength: 1, maxLength: 100, description: 'your own reference (e.g. an order id); agents paying the paylink pass it as the payment reference' });

const Item = T.Object(
  {
    description: T.String({ minLength: 1, maxLength: 200 }),
    price: Amount,
    quantity: T.Optional(T.Integer({ minimum: 1, maximum: 10_000, description: 'default 1' })),
  },
  { additionalProperties: false, description: 'one line: description, unit price in USDC, quantity' },
);

/** The fields of create_payment_request that wallets and merchants share. */
const CREATE_FIELDS = {
  description: T.String({ minLength: 1, maxLength: 500, description: 'what the payer pays for; shown on the checkout page' }),
  amount: T.Optional(Amount),
  items: T.Optional(T.Array(Item, { minItems: 1, maxItems: MAX_ITEMS, description: 'itemised list; amount = the sum of price × quantity' })),
  reference: T.Optional(Reference),
  expires_in: T.Optional(
    T.Union([T.Integer({ minimum: 1 }), T.String({ maxLength: 16 })], { description: 'seconds, or a duration such as "24h" or "7d"; default 7 days, at most 90 days' }),
  ),
};

/** Parameters and summaries of the paylink actions, served on /bot (wallets) and /merchant (merchants). */
export const PAYLINK_ACTIONS = {
  create: {
    params: Params(CREATE_FIELDS),
    summary:
      'Creates a paylink: a checkout page (url) with a Solana Pay QR code for humans, payable by agents with pay {payment_request_id}. Without amount and items the payer chooses the amount.',
  },
  get: {
    params: Params({ request_id: T.Optional(RequestId), reference: T.Optional(Reference) }),
    summary: 'One of your paylinks by request_id or by your reference: status, payer and signature once paid, and payments that did not pay it.',
  },
  list: {
    params: Params({ status: T.Optional(T.Union(PAYLINK_STATUSES.map((s) => T.Literal(s)))), limit: T.Optional(Limit), offset: T.Optional(Offset) }),
    summary: 'Your paylinks, newest first.',
  },
  cancel: {
    params: Params({ request_id: RequestId }),
    summary: 'Cancels an open paylink: its page shows it cancelled and it can no longer be paid.',
  },
  invite: {
    params: Params({
      request_id: RequestId,
      to_email: T.Optional(T.String({ minLength: 3, maxLength: 254, description: 'e-mail address that gets the checkout link' })),
      to_wallet: T.Optional(T.String({ minLength: 1, maxLength: 64, description: 'username of a wallet: a paylink.invitation event in its feed' })),
      message: T.Optional(T.String({ maxLength: 500 })),
    }),
    summary: `Sends an open paylink by e-mail or to a wallet's event feed (at most ${INVITATIONS_PER_HOUR} per paylink and ${INVITATIONS_PER_WALLET_PER_HOUR} per payee per hour).`,
  },
};

export const EARNING = {
  create_payment_request: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({
      ...CREATE_FIELDS,
      reveal_owner: T.Optional(T.Boolean({ description: "show the owner's e-mail on the checkout page; default false" })),
    }),
    summary: PAYLINK_ACTIONS.create.summary,
  }),
  get_payment_request: action({ endpoint: 'bot', auth: 'bot', readOnly: true, ...PAYLINK_ACTIONS.get }),
  list_payment_requests: action({ endpoint: 'bot', auth: 'bot', readOnly: true, ...PAYLINK_ACTIONS.list }),
  cancel_payment_request: action({ endpoint: 'bot', auth: 'bot', ...PAYLINK_ACTIONS.cancel }),
  send_paylink_invitation: action({ endpoint: 'bot', auth: 'bot', ...PAYLINK_ACTIONS.invite }),
  request_funds: action({
    endpoint: 'bot',
    auth: 'bot',
    idempotent: true,
    params: Params({ amount: Amount, reason: T.String({ minLength: 1, maxLength: 500 }) }),
    summary: 'Asks the owner for funds: mails the owner a fund page with the deposit address and a Solana Pay QR code. Fulfilled when a deposit covering it lands after it (money already in the wallet does not count) or the owner marks it. Honours X-Idempotency-Key.',
  }),
  list_fund_requests: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({ status: T.Optional(T.Union(FUND_REQUEST_STATUSES.map((s) => T.Literal(s)))), limit: T.Optional(Limit), offset: T.Optional(Offset) }),
    summary: 'Your fund requests, newest first.',
  }),
  pay: action({
    endpoint: 'public',
    auth: 'none',
    readOnly: true,
    params: Params({ short_code: T.String({ minLength: 1, maxLength: 32, description: 'the code at the end of the checkout URL /pay/<short_code>' }) }),
    summary: 'Paylink details for a checkout: description, items, amount, payee, status, the Solana Pay URL and the recipient address.',
  }),
  pay_status: action({
    endpoint: 'public',
    auth: 'none',
    readOnly: true,
    params: Params({ short_code: T.String({ minLength: 1, maxLength: 32, description: 'the code at the end of the checkout URL /pay/<short_code>' }) }),
    summary: 'Whether the paylink has been paid (status open, paid, expired or cancelled; paid_at and signature once paid). Looks at the chain for a new payment at most every 2 s per paylink, so a polling checkout page learns of its payment within seconds.',
  }),
};
