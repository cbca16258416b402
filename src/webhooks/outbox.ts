/**
 * Writing merchant events and their webhook messages (STYLE habit 11: the outbox row is written
 * in the business transaction). Every function here is synchronous and MUST run inside the
 * SQLite write transaction of the change it announces, so a completed payment can never exist
 * without its notification queued, nor a notification without its payment.
 *
 * Message body (Standard Webhooks' recommended shape):
 * `{"type": "...", "timestamp": "<ISO 8601>", "event_id": "evt_…", "data": {…}}`.
 */
import type { Store } from '../db/store.ts';
import { base32 } from '../contract/ids.ts';
import { MERCHANT_EVENT_TYPES } from '../contract/merchant.ts';
import { appendEvent } from '../db/events.ts';
import type { TxRow } from '../db/transactions.ts';
import { signReceipt, transactionClaims } from '../evidence/receipts.ts';
import { getWallet } from '../db/wallets.ts';
import { activeEndpoint, insertDelivery } from '../db/webhooks.ts';
import { jsonText } from '../domain/json.ts';
import { toUsdcNumber } from '../domain/money.ts';
import type { Services } from '../services.ts';

/** A fresh `webhook-id` / delivery_id: `msg_` + 26 base32 characters (128 random bits). */
export function newDeliveryId(): string {
  return `msg_${base32(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/** A fresh webhook endpoint id (`whe_…`). */
export function newEndpointId(): string {
  return `whe_${base32(crypto.getRandomValues(new Uint8Array(16)))}`;
}

const WEBHOOK_TYPES: ReadonlySet<string> = new Set(MERCHANT_EVENT_TYPES);

/**
 * Appends a merchant event to its feed and, for the types webhooks carry (MERCHANT_EVENT_TYPES),
 * queues one message for the merchant's active endpoint (none when no webhook is set or it is
 * disabled: the event stays in the feed). Call inside the write transaction of the change.
 */
export async function recordMerchantEvent(db: Store, merchantId: string, type: string, data: Record<string, unknown>, now: number): Promise<{ eventId: string; deliveryId: string | null }> {
  const eventId = await appendEvent(db, { merchantId, type, data, now });
  const endpoint = WEBHOOK_TYPES.has(type) ? await activeEndpoint(db, merchantId) : null;
  if (!endpoint) return { eventId, deliveryId: null };
  const deliveryId = newDeliveryId();
  const payload = jsonText({ type, timestamp: new Date(now).toISOString(), event_id: eventId, data });
  await insertDelivery(db, { delivery_id: deliveryId, endpoint_id: endpoint.endpoint_id, merchant_id: merchantId, event_id: eventId, event_type: type, payload, now });
  return { eventId, deliveryId };
}

/**
 * Records that `tx`, a payment to a merchant, completed: the merchant's `payment.received` event
 * and its webhook message. Called by `completeTx` inside the transaction that marks the payment
 * completed; does nothing for a transaction that is not to a merchant.
 */
export async function recordMerchantPayment(services: Services, tx: TxRow, now: number): Promise<void> {
  if (!tx.to_merchant_id) return;
  const payer = await getWallet(services.db, tx.wallet_id);
  await recordMerchantEvent(
    services.db,
    tx.to_merchant_id,
    'payment.received',
    {
      transaction_id: tx.transaction_id,
      reference: tx.reference,
      amount: toUsdcNumber(tx.amount),
      currency: 'USDC',
      payer: payer?.username ?? null,
      payer_address: payer?.address ?? null,
      note: tx.note,
      payment_request_id: tx.payment_request_id,
      signature: tx.signature,
      paid_at: new Date(now).toISOString(),
      network: services.config.solana.network,
      // The payment's signed receipt (src/evidence/receipts.ts); get_receipt adds the slot.
      receipt: payer ? signReceipt(services, transactionClaims(services, { ...tx, status: 'completed', completed_at: BigInt(now) }, payer, null)) : null,
    },
    now,
  );
}
