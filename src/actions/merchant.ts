/**
 * Merchant accounts (SPEC "Merchant actions"; DESIGN §8): registration, balance, payment
 * verification by reference, history, and the payment-notification webhook.
 *
 * Payers pass the merchant's order identifier as pay {reference}. A reference is unique per
 * merchant: pay refuses it while another payment with it is under way or completed (see
 * src/earning/references.ts), so no order is paid twice and verify has one answer.
 */
import type { Address } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import { MERCHANT } from '../contract/merchant.ts';
import { newId } from '../contract/ids.ts';
import {
  getMerchant,
  largestPaymentByReference,
  insertMerchant,
  merchantPayments,
  merchantTotals,
  paymentHoldingReference,
  type MerchantPayment,
  type MerchantRow,
} from '../db/merchants.ts';
import { getSale, markRefundDue, merchantSaleBySignature } from '../db/x402-sales.ts';
import { activeEndpoint, deliveryAttempts, getDelivery, insertActiveEndpoint, merchantDeliveries, requeueDelivery, rotateEndpointSecret, type DeliveryRow, type EndpointRow } from '../db/webhooks.ts';
import { newApiKey } from '../domain/api-keys.ts';
import { checkName, checkUsername } from '../domain/identity.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { newWebhookSecret } from '../net/standard-webhooks.ts';
import { isSolanaAddress } from '../payments/recipient.ts';
import type { Store } from '../db/store.ts';
import type { Services } from '../services.ts';
import { checkWebhookUrl } from '../webhooks/net.ts';
import { newEndpointId, recordMerchantEvent } from '../webhooks/outbox.ts';
import { sealWebhookSecret } from '../webhooks/secrets.ts';
import type { ActionContext } from '../action-context.ts';
import { implement } from './registry.ts';
import { paylinkActions } from './earning.ts';
import { markFeedRead, readFeed } from './feed.ts';
import { merchantPayee } from '../earning/payee.ts';
import { assertNewPaylinkReference, orderAmount } from '../earning/references.ts';
import { amountParam } from '../params.ts';
import { invoiceSaleFees, saleFeesOwed, saleFeesView } from '../earning/sale-fees.ts';

/** How long the previous secret keeps signing after rotate_webhook_secret. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** The merchant of the calling key (the dispatcher authenticated it). */
async function callerMerchant(ctx: ActionContext): Promise<MerchantRow> {
  if (ctx.principal.kind !== 'merchant') throw new AppError('UNAUTHORIZED');
  const merchant = await getMerchant(ctx.services.db, ctx.principal.merchantId);
  if (!merchant) throw new AppError('UNAUTHORIZED');
  return merchant;
}

function endpointView(e: EndpointRow | null) {
  if (!e) return null;
  return { webhook_id: e.endpoint_id, url: e.url, status: e.status, disabled_reason: e.disabled_reason, created_at: iso(e.created_at) };
}

function paymentView(p: MerchantPayment) {
  return {
    transaction_id: p.transaction_id,
    amount: toUsdcNumber(p.amount),
    currency: 'USDC',
    reference: p.reference,
    note: p.note,
    payer: p.payer_username,
    payer_address: p.payer_address,
    signature: p.signature,
    payment_request_id: p.payment_request_id,
    via: p.via,
    paid_at: iso(p.completed_at),
    ...(p.via === 'x402' ? { refund_due: p.refund_due_reason, sale_fee: toUsdcNumber(p.sale_fee ?? 0n) } : {}),
  };
}

async function deliveryView(db: Store, d: DeliveryRow) {
  return {
    delivery_id: d.delivery_id,
    webhook_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: Number(d.attempts),
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    last_http_status: d.last_status === null ? null : Number(d.last_status),
    last_error: d.last_error,
    created_at: iso(d.created_at),
    delivered_at: iso(d.delivered_at),
    attempt_log: (await deliveryAttempts(db, d.delivery_id)).map((a) => ({
      attempt: Number(a.attempt),
      at: iso(a.started_at),
      url: a.url,
      http_status: a.http_status === null ? null : Number(a.http_status),
      error: a.error,
      duration_ms: Number(a.duration_ms),
      outcome: a.outcome,
    })),
  };
}

async function checkedUrl(services: Services, field: string, raw: string): Promise<string> {
  const checked = await checkWebhookUrl(services, raw);
  if (!checked.ok) {
    throw invalid(field, checked.reason, 'Use a public http(s) URL without user info, e.g. https://shop.example.com/webhooks/agent-wallet (for local development the operator can list the host in outbound.allow_hosts).');
  }
  return checked.url;
}

/**
 * Makes `url` the merchant's active webhook with a fresh secret and queues a `webhook.test`
 * message to it. Call inside a write transaction. Returns the secret (shown once).
 */
async function setEndpoint(services: Services, merchantId: string, url: string, now: number): Promise<{ webhookId: string; secret: string; testDeliveryId: string | null }> {
  const endpointId = newEndpointId();
  const secret = newWebhookSecret();
  await insertActiveEndpoint(services.db, { endpoint_id: endpointId, merchant_id: merchantId, url, secret: sealWebhookSecret(services.masterKey, endpointId, secret), now });
  const test = await recordMerchantEvent(services.db, merchantId, 'webhook.test', { webhook_id: endpointId, url, message: 'Your webhook URL is set; payment.received events will be sent here.' }, now);
  return { webhookId: endpointId, secret, testDeliveryId: test.deliveryId };
}

const SECRET_HINT =
  'Store the secret now: it is shown once. Verify each webhook: HMAC-SHA256 with the base64-decoded part after "whsec_" over "<webhook-id>.<webhook-timestamp>.<raw body>", base64, compared with the "v1,<sig>" entries of webhook-signature; de-duplicate by webhook-id.';

/** Every /v1/merchant action. */
export const merchantActions = implement(MERCHANT, {
  register: async ({ services }, p) => {
    const name = checkName(p.name);
    if (!name.ok) throw invalid('/name', name.reason);
    const username = checkUsername(p.username);
    if (!username.ok) throw invalid('/username', username.reason, 'Choose a username such as "acme-store": 3–32 of a-z, 0-9 and single inner dashes.');
    if (!isSolanaAddress(p.payout_address)) throw invalid('/payout_address', 'is not a valid Solana address (base58, 32 bytes)', 'Give the Solana address (the owner, not a token account) that should receive the USDC.');
    const webhookUrl = p.webhook_url === undefined ? null : await checkedUrl(services, '/webhook_url', p.webhook_url);
    const merchantId = newId('merchant');
    const apiKey = newApiKey('merchant');
    const now = services.now().getTime();
    const created = await services.db
      .transaction(async () => {
        if (!(await insertMerchant(services.db, { merchant_id: merchantId, username: username.value, name: name.value, payout_address: p.payout_address, api_key_hash: apiKey.hash, created_at: now }))) return null;
        return { webhook: webhookUrl === null ? null : await setEndpoint(services, merchantId, webhookUrl, now) };
      });
    if (!created) {
      throw new AppError('VALIDATION_ERROR', `/username: "${username.value}" is already taken by a wallet or a merchant.`, {
        howToFix: 'Choose another username.',
        details: { field: '/username' },
      });
    }
    return {
      merchant_id: merchantId,
      api_key: apiKey.key,
      name: name.value,
      username: username.value,
      payout_address: p.payout_address,
      webhook: created.webhook ? { webhook_id: created.webhook.webhookId, url: webhookUrl, secret: created.webhook.secret } : null,
      next_step: `Store the api_key now: it is shown once. Payers pay you with pay {to: "${username.value}", amount, reference: <your order id>}; check an order with verify {reference}.${created.webhook ? ` ${SECRET_HINT}` : ' Set a notification URL with set_webhook.'}`,
    };
  },

  info: async (ctx) => {
    const m = await callerMerchant(ctx);
    return {
      merchant_id: m.merchant_id,
      name: m.name,
      username: m.username,
      payout_address: m.payout_address,
      network: ctx.services.config.solana.network,
      webhook: endpointView(await activeEndpoint(ctx.services.db, m.merchant_id)),
      created_at: iso(m.created_at),
    };
  },

  balance: async (ctx) => {
    const m = await callerMerchant(ctx);
    const micro = await ctx.services.chain.getTokenBalance(m.payout_address as Address, ctx.services.config.usdcMint as Address);
    const totals = await merchantTotals(ctx.services.db, m.merchant_id);
    return {
      balance: toUsdcNumber(micro),
      currency: 'USDC',
      payout_address: m.payout_address,
      network: ctx.services.config.solana.network,
      total_received: toUsdcNumber(totals.received),
      payments_received: totals.count,
      last_payment_at: iso(totals.lastPaidAt),
      sale_fees_owed: toUsdcNumber(await saleFeesOwed(ctx.services, m.merchant_id)),
    };
  },

  verify: async (ctx, p) => {
    const m = await callerMerchant(ctx);
    // Without expected_amount, the order asks what its paylink asks (when one carries the reference):
    // a smaller payment with the reference never reads as paid.
    const given = p.expected_amount === undefined ? null : amountParam(ctx.services, '/expected_amount', p.expected_amount);
    const ordered = await orderAmount(ctx.services.db, ctx.services.now().getTime(), m.merchant_id, p.reference);
    const expected = given ?? (ordered > 0n ? ordered : null);
    const payment = await largestPaymentByReference(ctx.services.db, m.merchant_id, p.reference);
    const base = { reference: p.reference, expected_amount: expected === null ? null : toUsdcNumber(expected) };
    if (!payment) {
      const underway = await paymentHoldingReference(ctx.services.db, m.merchant_id, p.reference);
      return {
        ...base,
        paid: false,
        status: underway ? 'in_progress' : 'not_found',
        transaction_id: null,
        amount: null,
        paid_at: null,
        payer: null,
        reason: underway ? 'a payment with this reference is under way but not completed yet' : 'no payment with this reference was received',
      };
    }
    const view = paymentView(payment);
    if (expected !== null && payment.amount < expected) {
      return { ...base, ...view, paid: false, status: 'underpaid', reason: `the payment of ${view.amount} USDC is less than expected_amount ${base.expected_amount} USDC` };
    }
    return { ...base, ...view, paid: true, status: 'paid', reason: null };
  },

  history: async (ctx, p) => {
    const m = await callerMerchant(ctx);
    let sinceMs: number | undefined;
    if (p.since !== undefined) {
      sinceMs = Date.parse(p.since);
      if (!/^\d{4}-\d{2}-\d{2}/.test(p.since) || !Number.isFinite(sinceMs)) throw invalid('/since', 'must be an ISO 8601 time such as 2025-01-31T00:00:00Z');
    }
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = await merchantPayments(ctx.services.db, { merchantId: m.merchant_id, sinceMs, limit, offset });
    return { items: items.map(paymentView), total, limit, offset };
  },

  set_webhook: async (ctx, p) => {
    const m = await callerMerchant(ctx);
    const url = await checkedUrl(ctx.services, '/url', p.url);
    const now = ctx.services.now().getTime();
    const set = await ctx.services.db.transaction(async () => await setEndpoint(ctx.services, m.merchant_id, url, now));
    return { webhook_id: set.webhookId, url, status: 'active', secret: set.secret, test_delivery_id: set.testDeliveryId, next_step: `A webhook.test message is on its way. ${SECRET_HINT}` };
  },

  rotate_webhook_secret: async (ctx) => {
    const m = await callerMerchant(ctx);
    const { db } = ctx.services;
    const now = ctx.services.now().getTime();
    const secret = newWebhookSecret();
    const rotated = await db
      .transaction(async () => {
        const endpoint = await activeEndpoint(db, m.merchant_id);
        if (!endpoint) return null;
        // The current sealed secret is bound to this endpoint already, so it moves to previous_secret as is.
        await rotateEndpointSecret(db, endpoint.endpoint_id, sealWebhookSecret(ctx.services.masterKey, endpoint.endpoint_id, secret), endpoint.secret, now + ROTATION_GRACE_MS, now);
        return endpoint;
      });
    if (!rotated) throw new AppError('INVALID_STATUS', 'No active webhook to rotate the secret of.', { howToFix: 'Set a webhook URL with set_webhook; it returns a new secret.' });
    return {
      webhook_id: rotated.endpoint_id,
      secret,
      previous_secret_valid_until: iso(now + ROTATION_GRACE_MS),
      next_step: `Until previous_secret_valid_until each message carries two v1 signatures (new and old secret); switch your receiver to the new secret. ${SECRET_HINT}`,
    };
  },

  webhook_deliveries: async (ctx, p) => {
    const m = await callerMerchant(ctx);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = await merchantDeliveries(ctx.services.db, m.merchant_id, limit, offset);
    return { webhook: endpointView(await activeEndpoint(ctx.services.db, m.merchant_id)), items: await Promise.all(items.map((d) => deliveryView(ctx.services.db, d))), total, limit, offset };
  },

  redeliver: async (ctx, p) => {
    const m = await callerMerchant(ctx);
    const { db } = ctx.services;
    const now = ctx.services.now().getTime();
    const outcome = await db
      .transaction(async () => {
        const delivery = await getDelivery(db, p.delivery_id);
        if (!delivery || delivery.merchant_id !== m.merchant_id) return 'not_found' as const;
        const endpoint = await activeEndpoint(db, m.merchant_id);
        if (!endpoint) return 'no_endpoint' as const;
        if (delivery.lease_until !== null && Number(delivery.lease_until) > now) return 'in_flight' as const;
        await requeueDelivery(db, delivery.delivery_id, endpoint.endpoint_id, now);
        return 'queued' as const;
      });
    if (outcome === 'not_found') throw new AppError('NOT_FOUND', 'Webhook delivery not found.', { howToFix: 'Use a delivery_id from webhook_deliveries.' });
    if (outcome === 'no_endpoint') throw new AppError('INVALID_STATUS', 'No active webhook URL to deliver to.', { howToFix: 'Set one with set_webhook first (a 410 Gone answer disables the current one).' });
    if (outcome === 'in_flight') throw new AppError('INVALID_STATUS', 'This message is being delivered right now.', { howToFix: 'Wait a few seconds and read webhook_deliveries.' });
    return { ...(await deliveryView(db, (await getDelivery(db, p.delivery_id))!)), next_step: 'queued: it is sent again within seconds with the same webhook-id' };
  },

  create_payment_request: async (ctx, p) => {
    const m = await callerMerchant(ctx);
    return paylinkActions.create(ctx.services, merchantPayee(m), p, async (reference, amount) => {
      if (reference !== null) await assertNewPaylinkReference(ctx.services.db, ctx.services.now().getTime(), m.merchant_id, reference, amount);
    });
  },
  get_payment_request: async (ctx, p) => await paylinkActions.get(ctx.services, merchantPayee(await callerMerchant(ctx)), p),
  list_payment_requests: async (ctx, p) => await paylinkActions.list(ctx.services, merchantPayee(await callerMerchant(ctx)), p),
  cancel_payment_request: async (ctx, p) => await paylinkActions.cancel(ctx.services, merchantPayee(await callerMerchant(ctx)), p),
  send_paylink_invitation: async (ctx, p) => await paylinkActions.invite(ctx.services, merchantPayee(await callerMerchant(ctx)), p),

  x402_refund_due: async (ctx, p) => {
    const m = await callerMerchant(ctx);
    const sale = await merchantSaleBySignature(ctx.services.db, m.merchant_id, p.transaction);
    if (!sale) throw new AppError('NOT_FOUND', 'No x402 sale of this merchant has this transaction.', { howToFix: "Pass the transaction of the x402 receipt (PAYMENT-RESPONSE) of one of this merchant's sales." });
    const now = ctx.services.now().getTime();
    const marked = await ctx.services.db.transaction(async () => await markRefundDue(ctx.services.db, sale.sale_id, p.reason, now));
    const row = (await getSale(ctx.services.db, sale.sale_id))!;
    return { transaction_id: row.sale_id, signature: row.signature, status: row.status, amount: toUsdcNumber(row.amount), refund_due: row.refund_due_reason, recorded_now: marked };
  },

  sale_fees: async (ctx) => saleFeesView(ctx.services, await callerMerchant(ctx)),
  pay_sale_fees: async (ctx) => invoiceSaleFees(ctx.services, await callerMerchant(ctx)),

  events: async (ctx, p) => readFeed(ctx.services, { kind: 'merchant', id: (await callerMerchant(ctx)).merchant_id }, p),
  mark_read: async (ctx, p) => await markFeedRead(ctx.services, { kind: 'merchant', id: (await callerMerchant(ctx)).merchant_id }, p),
});
