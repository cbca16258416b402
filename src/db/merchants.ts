/**
 * Merchant accounts and what they received (DESIGN §8). A merchant has no ledger rows of its
 * own: a payment to a merchant is the payer's outgoing transaction with `to_merchant_id` set, or
 * a Solana Pay payment recorded on the merchant's paylink, so everything here reads those rows.
 * Usernames share the wallets' namespace (`usernames`).
 */
import type { Store } from './store.ts';
import type { TxRow } from './transactions.ts';

/** A row of `merchants`; `api_key_hash` is the SHA-256 of the merchant key. */
export interface MerchantRow {
  merchant_id: string;
  username: string;
  name: string;
  payout_address: string;
  api_key_hash: Uint8Array;
  created_at: bigint;
}

/** What {@link insertMerchant} stores. */
export interface NewMerchant extends Record<string, string | number | null | Uint8Array> {
  merchant_id: string;
  username: string;
  name: string;
  payout_address: string;
  api_key_hash: Uint8Array;
  created_at: number;
}

/**
 * Inserts a merchant and claims its username; call inside a write transaction. Returns false
 * (and writes nothing) when the username is already taken by a wallet or a merchant.
 */
export async function insertMerchant(db: Store, m: NewMerchant): Promise<boolean> {
  const claimed = await db.run("INSERT INTO usernames (username, kind, ref_id) VALUES (?, 'merchant', ?) ON CONFLICT (username) DO NOTHING", m.username, m.merchant_id);
  if (claimed.changes !== 1) return false;
  await db.run(`INSERT INTO merchants (merchant_id, username, name, payout_address, api_key_hash, created_at)
     VALUES ($merchant_id, $username, $name, $payout_address, $api_key_hash, $created_at)`, { ...m });
  return true;
}

/** A merchant by id, or null. */
export async function getMerchant(db: Store, merchantId: string): Promise<MerchantRow | null> {
  return await db.get<MerchantRow>('SELECT * FROM merchants WHERE merchant_id = ?', merchantId);
}

/** Statuses of a payment that still counts for its reference: it is under way or done. */
const LIVE_STATUSES = "('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')";

/**
 * The payment to `merchantId` that already holds `reference`: a completed one first, else one
 * still outstanding (not failed, cancelled, expired or rejected). Null when the reference is free.
 * Call inside the transaction that creates the new intent, so two concurrent pays cannot both pass.
 */
export async function paymentHoldingReference(db: Store, merchantId: string, reference: string): Promise<Pick<TxRow, 'transaction_id' | 'wallet_id' | 'status'> | null> {
  return await db
    .get<Pick<TxRow, 'transaction_id' | 'wallet_id' | 'status'>>(`SELECT transaction_id, wallet_id, status FROM transactions
       WHERE to_merchant_id = ? AND reference = ? AND direction = 'out' AND status IN ${LIVE_STATUSES}
       ORDER BY status = 'completed' DESC, created_at LIMIT 1`, merchantId, reference);
}

/**
 * The payment that keeps `reference` from another payment to `merchantId`: another payer's signed
 * (pending) or completed one for at least `minAmount` (a smaller one may be an underpayment, which
 * must not keep out the payment that meets the order), or — so the payer does not pay an order
 * twice — its own signed or completed one for at least `ownMinAmount`, or its own not yet signed.
 * Another payer's unsigned intent holds nothing: it costs nothing to make. `exceptTxId` leaves out
 * the payment asking.
 */
export async function referenceHolder(
  db: Store,
  q: { merchantId: string; reference: string; payerWalletId: string; minAmount: bigint; ownMinAmount: bigint; exceptTxId?: string },
): Promise<Pick<TxRow, 'transaction_id' | 'wallet_id' | 'status'> | null> {
  return await db
    .get<Pick<TxRow, 'transaction_id' | 'wallet_id' | 'status'>>(`SELECT transaction_id, wallet_id, status FROM transactions
       WHERE to_merchant_id = ?1 AND reference = ?2 AND direction = 'out' AND transaction_id != ?6
         AND ((status IN ('pending', 'completed') AND amount >= CAST(CASE WHEN wallet_id = ?3 THEN ?5 ELSE ?4 END AS INTEGER))
           OR (wallet_id = ?3 AND status IN ('pre_approved', 'awaiting_approval', 'approved')))
       ORDER BY status = 'completed' DESC, created_at LIMIT 1`, q.merchantId, q.reference, q.payerWalletId, q.minAmount, q.ownMinAmount, q.exceptTxId ?? '');
}

/**
 * A payment a merchant received through the service: an agent's completed payment (`via`
 * wallet), a Solana Pay payment that paid one of its paylinks (`via` solana_pay; no ledger
 * row, the payer known by address only), or an x402 sale settled by our facilitator (`via` x402:
 * the transaction id is the sale's, the reference `x402:` + the buyer's payment-identifier (saleReference in x402-sales.ts) — the
 * buyer chooses it, so it never reads as one of the merchant's own order references —, the note
 * the resource bought; a payer that is one of our wallets is named).
 */
export interface MerchantPayment {
  transaction_id: string | null;
  amount: bigint;
  reference: string | null;
  note: string | null;
  signature: string | null;
  completed_at: bigint;
  payer_username: string | null;
  payer_address: string | null;
  payment_request_id: string | null;
  via: 'wallet' | 'solana_pay' | 'x402';
  /** x402 only: the paywall settled but could not deliver; the merchant's to refund. */
  refund_due_reason: string | null;
  /** x402 only: the operator's fee the sale owes (src/earning/sale-fees.ts). */
  sale_fee: bigint | null;
}

/**
 * Everything a merchant received, as one relation; binds the merchant id three times. PostgreSQL
 * wants the subquery named, and types a UNION's columns branch by branch (so the fee's NULL is cast).
 */
const RECEIPTS = `(
  SELECT t.transaction_id, t.amount, t.reference, t.note, t.signature, t.completed_at, w.username AS payer_username, w.address AS payer_address,
         t.payment_request_id, 'wallet' AS via, NULL AS refund_due_reason, CAST(NULL AS INTEGER) AS sale_fee
  FROM transactions t JOIN wallets w ON w.wallet_id = t.wallet_id
  WHERE t.to_merchant_id = ? AND t.direction = 'out' AND t.status = 'completed'
  UNION ALL
  SELECT NULL, p.paid_amount, p.reference, NULL, p.signature, p.paid_at, NULL, p.payer, p.request_id, 'solana_pay', NULL, NULL
  FROM payment_requests p
  WHERE p.merchant_id = ? AND p.status = 'paid' AND p.paid_via = 'solana_pay'
  UNION ALL
  SELECT s.sale_id, s.amount, 'x402:' || s.payment_id, s.resource, s.signature, s.completed_at, (SELECT username FROM wallets WHERE address = s.payer), s.payer, NULL, 'x402', s.refund_due_reason, s.fee
  FROM x402_sales s
  WHERE s.merchant_id = ? AND s.status = 'completed'
) AS receipts`;

/**
 * The largest payment `merchantId` received with `reference`, however it was paid: the order's
 * payment, as an underpayment before it never holds the reference against it (referenceHolder).
 * An x402 sale is found by the buyer's payment-identifier, its sale id or its signature.
 */
export async function largestPaymentByReference(db: Store, merchantId: string, reference: string): Promise<MerchantPayment | null> {
  return await db
    .get<MerchantPayment>(`SELECT * FROM ${RECEIPTS} WHERE reference = ? OR (via = 'x402' AND (transaction_id = ? OR signature = ?)) ORDER BY amount DESC, completed_at LIMIT 1`, merchantId, merchantId, merchantId, reference, reference, reference);
}

/** A page of what `merchantId` received, newest first, optionally only at or after `sinceMs`. */
export async function merchantPayments(db: Store, q: { merchantId: string; sinceMs?: number; limit: number; offset: number }): Promise<{ items: MerchantPayment[]; total: number }> {
  const where = q.sinceMs === undefined ? '' : 'WHERE completed_at >= ?';
  const args: (string | number)[] = q.sinceMs === undefined ? [q.merchantId, q.merchantId, q.merchantId] : [q.merchantId, q.merchantId, q.merchantId, q.sinceMs];
  const total = await db.get<{ n: bigint }>(`SELECT count(*) AS n FROM ${RECEIPTS} ${where}`, ...args);
  const items = await db
    .all<MerchantPayment>(`SELECT * FROM ${RECEIPTS} ${where} ORDER BY completed_at DESC, signature DESC NULLS LAST LIMIT ? OFFSET ?`, ...args, q.limit, q.offset);
  return { items, total: Number(total?.n ?? 0n) };
}

/** Totals a merchant received through the service. */
export async function merchantTotals(db: Store, merchantId: string): Promise<{ count: number; received: bigint; lastPaidAt: bigint | null }> {
  const row = await db
    .get<{ n: bigint; s: bigint | null; last: bigint | null }>(`SELECT count(*) AS n, sum(amount) AS s, max(completed_at) AS last FROM ${RECEIPTS}`, merchantId, merchantId, merchantId);
  return { count: Number(row?.n ?? 0n), received: row?.s ?? 0n, lastPaidAt: row?.last ?? null };
}

/** Service-wide counts for the public `stats` action. */
export async function serviceCounts(db: Store): Promise<{ wallets: number; claimedWallets: number; merchants: number; paymentsCompleted: number; volume: bigint }> {
  const w = await db.get<{ n: bigint; c: bigint | null }>("SELECT count(*) AS n, sum(CASE WHEN status = 'claimed' THEN 1 ELSE 0 END) AS c FROM wallets");
  const m = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM merchants');
  const p = await db
    .get<{ n: bigint; s: bigint | null }>("SELECT count(*) AS n, sum(amount) AS s FROM transactions WHERE type = 'payment' AND direction = 'out' AND status = 'completed'");
  return {
    wallets: Number(w?.n ?? 0n),
    claimedWallets: Number(w?.c ?? 0n),
    merchants: Number(m?.n ?? 0n),
    paymentsCompleted: Number(p?.n ?? 0n),
    volume: p?.s ?? 0n,
  };
}

