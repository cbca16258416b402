/**
 * Contract of the merchant actions (SPEC "Merchant actions"; DESIGN §8). Every action is
 * `POST {base_url}/merchant {action, …}`; all but register need `Authorization: Bearer
 * wallet_merchant_…`. Webhooks follow Standard Webhooks (webhook-id, webhook-timestamp,
 * webhook-signature `v1,<base64 HMAC-SHA256>` keyed with the base64 part of the `whsec_` secret).
 */
import { Type as T } from '@sinclair/typebox';
import { Amount, Limit, NoParams, Offset, Params, SolanaAddress } from './common.ts';
import { action } from './action.ts';
import { PAYLINK_ACTIONS } from './earning.ts';
import { FeedParams, MarkReadParams } from './payments.ts';

/** An http(s) URL the service will POST webhooks to; checked against the outbound rules. */
const WebhookUrl = T.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives webhooks; private and loopback addresses are refused unless the operator allows the host' });

/** Webhook event types a merchant can receive. */
export const MERCHANT_EVENT_TYPES = ['payment.received', 'payment_request.paid', 'x402.sale', 'sale_fees.due', 'sale_fees.paid', 'webhook.test'] as const;

/** The `webhook-id` of a message: the same on every attempt and on redelivery. */
export const DELIVERY_ID_PATTERN = '^msg_[0-9a-hjkmnp-tv-z]{26}$';
/** A webhook endpoint id. */
export const ENDPOINT_ID_PATTERN = '^whe_[0-9a-hjkmnp-tv-z]{26}$';

export const MERCHANT = {
  register: action({
    endpoint: 'merchant',
    auth: 'none',
    params: Params({
      name: T.String({ minLength: 1, maxLength: 256, description: 'display name, 1–64 visible characters' }),
      username: T.String({ minLength: 3, maxLength: 32, description: 'the name payers use in pay {to}: 3–32 of a-z, 0-9 and single inner dashes; shared namespace with wallets' }),
      payout_address: SolanaAddress,
      webhook_url: T.Optional(WebhookUrl),
    }),
    summary: 'Creates a merchant account; returns merchant_id and the merchant API key (wallet_merchant_…, shown once), and the webhook secret when webhook_url is given.',
    destructive: true,
  }),
  info: action({ endpoint: 'merchant', auth: 'merchant', readOnly: true, params: NoParams, summary: 'The merchant account: name, username, payout address and webhook.' }),
  balance: action({
    endpoint: 'merchant',
    auth: 'merchant',
    readOnly: true,
    params: NoParams,
    summary: 'On-chain USDC balance of the payout address, and the totals received through the service.',
  }),
  verify: action({
    endpoint: 'merchant',
    auth: 'merchant',
    readOnly: true,
    params: Params({
      reference: T.String({ minLength: 1, maxLength: 100, description: 'your order identifier, passed by the payer as pay {reference}' }),
      expected_amount: T.Optional(Amount),
    }),
    summary: 'Whether a completed payment with this reference (and at least expected_amount) was received: paid, transaction_id, amount, paid_at, payer.',
  }),
  history: action({
    endpoint: 'merchant',
    auth: 'merchant',
    readOnly: true,
    params: Params({
      limit: T.Optional(Limit),
      offset: T.Optional(Offset),
      since: T.Optional(T.String({ maxLength: 64, description: 'ISO 8601 time: only payments completed at or after it' })),
    }),
    summary: 'Completed payments received, newest first.',
  }),
  set_webhook: action({
    endpoint: 'merchant',
    auth: 'merchant',
    params: Params({ url: WebhookUrl }),
    summary: 'Sets the URL that receives payment notifications; returns webhook_id and a new signing secret (shown once) and sends a webhook.test event.',
  }),
  rotate_webhook_secret: action({
    endpoint: 'merchant',
    auth: 'merchant',
    params: NoParams,
    summary: 'Replaces the signing secret (shown once); for 24 hours messages carry signatures with both the new and the old secret.',
  }),
  webhook_deliveries: action({
    endpoint: 'merchant',
    auth: 'merchant',
    readOnly: true,
    params: Params({ limit: T.Optional(Limit), offset: T.Optional(Offset) }),
    summary: 'Webhook messages, newest first, with every delivery attempt (HTTP status, error, duration).',
  }),
  redeliver: action({
    endpoint: 'merchant',
    auth: 'merchant',
    params: Params({ delivery_id: T.String({ pattern: DELIVERY_ID_PATTERN, description: 'delivery_id from webhook_deliveries (the webhook-id header)' }) }),
    summary: 'Sends a webhook message again, with the same webhook-id, to the current webhook URL.',
  }),
  // Paylinks paying the payout address (SPEC: "an agent or merchant can create payment requests").
  // A merchant paylink's reference is the order id: verify finds the order however it was paid.
  create_payment_request: action({
    endpoint: 'merchant',
    auth: 'merchant',
    params: PAYLINK_ACTIONS.create.params,
    summary: `${PAYLINK_ACTIONS.create.summary} It pays the payout address; a reference (your order id) is unique among your open and paid paylinks and payments, and verify finds the order by it.`,
  }),
  get_payment_request: action({ endpoint: 'merchant', auth: 'merchant', readOnly: true, ...PAYLINK_ACTIONS.get }),
  list_payment_requests: action({ endpoint: 'merchant', auth: 'merchant', readOnly: true, ...PAYLINK_ACTIONS.list }),
  cancel_payment_request: action({ endpoint: 'merchant', auth: 'merchant', ...PAYLINK_ACTIONS.cancel }),
  send_paylink_invitation: action({ endpoint: 'merchant', auth: 'merchant', ...PAYLINK_ACTIONS.invite }),
  sale_fees: action({
    endpoint: 'merchant',
    auth: 'merchant',
    readOnly: true,
    params: NoParams,
    summary:
      "The operator's fee on your x402 sales settled here: fee_bps and fee_min, what the sales accrued, what you paid, what you owe, the credit limit past which sales are refused (sales_refused), and the newest invoice with its Solana Pay URL and the payments found for it.",
  }),
  pay_sale_fees: action({
    endpoint: 'merchant',
    auth: 'merchant',
    params: NoParams,
    summary:
      'An invoice for the sale fees owed now: a Solana Pay URL paying the treasury with a reference key, payable from any wallet; a payment is found on chain and credited (sale_fees shows it). An open invoice is brought up to date rather than replaced, so a payment already sent to it still counts.',
  }),
  events: action({
    endpoint: 'merchant',
    auth: 'merchant',
    readOnly: true,
    params: FeedParams,
    summary: 'The merchant event feed (payment.received, payment_request.*, x402.sale, sale_fees.*, webhook.test), oldest first after `since`; the same events the webhook gets, and more.',
  }),
  mark_read: action({ endpoint: 'merchant', auth: 'merchant', params: MarkReadParams, summary: 'Marks events as read: event_ids, or all: true.' }),
  x402_refund_due: action({
    endpoint: 'merchant',
    auth: 'merchant',
    params: Params({
      transaction: T.String({ minLength: 64, maxLength: 90, description: 'the sale\'s transaction signature (the x402 receipt\'s transaction)' }),
      reason: T.String({ minLength: 1, maxLength: 500, description: 'why the buyer did not get what it paid for' }),
    }),
    summary: "Records that an x402 sale settled but its answer was not delivered (the paywall's upstream failed): the merchant's to refund. History shows it as refund_due; the first reason stands.",
  }),
};
