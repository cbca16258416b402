/** Sales settled by this daemon's x402 facilitator (migration 0012). */
import type { Store } from './store.ts';

export interface SaleRow {
  sale_id: string;
  merchant_id: string | null;
  wallet_id: string | null;
  pay_to: string;
  payer: string;
  amount: bigint;
  /** The operator's fee the merchant owes for this sale (0 for a wallet's). */
  fee: bigint;
  network: string;
  resource: string | null;
  payment_id: string | null;
  message_hash: Uint8Array;
  signature: string;
  signed_tx: Uint8Array;
  last_valid_block_height: bigint | null;
  status: 'settling' | 'completed' | 'failed';
  error: string | null;
  completed_at: bigint | null;
  refund_due_reason: string | null;
  refund_due_at: bigint | null;
  created_at: bigint;
  updated_at: bigint;
}

/**
 * A sale's reference in the merchant's books and on its receipt: `x402:` + the buyer's
 * payment-identifier (the buyer chooses it, so it never reads as a merchant's own order reference;
 * RECEIPTS in merchants.ts writes the same in SQL).
 */
export function saleReference(paymentId: string | null): string | null {
  return paymentId === null ? null : `x402:${paymentId}`;
}

export async function saleByMessageHash(db: Store, hash: Uint8Array): Promise<SaleRow | null> {
  return await db.get<SaleRow>('SELECT * FROM x402_sales WHERE message_hash = ?', hash);
}

export async function getSale(db: Store, saleId: string): Promise<SaleRow | null> {
  return await db.get<SaleRow>('SELECT * FROM x402_sales WHERE sale_id = ?', saleId);
}

export async function insertSale(db: Store, s: Omit<SaleRow, 'status' | 'error' | 'completed_at' | 'refund_due_reason' | 'refund_due_at' | 'created_at' | 'updated_at'> & { now: number }): Promise<void> {
  await db.run(`INSERT INTO x402_sales (sale_id, merchant_id, wallet_id, pay_to, payer, amount, fee, network, resource, payment_id, message_hash, signature, signed_tx, last_valid_block_height, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'settling', ?, ?)`, s.sale_id, s.merchant_id, s.wallet_id, s.pay_to, s.payer, s.amount, s.fee, s.network, s.resource, s.payment_id, s.message_hash, s.signature, s.signed_tx, s.last_valid_block_height, s.now, s.now);
}

/** Moves a settling sale to its outcome; false when it had one already. */
export async function finishSale(db: Store, saleId: string, status: 'completed' | 'failed', now: number, error: string | null = null): Promise<boolean> {
  return (
    (await db
      .run("UPDATE x402_sales SET status = ?1, error = ?2, updated_at = ?3, completed_at = CASE ?1 WHEN 'completed' THEN CAST(?3 AS INTEGER) END WHERE sale_id = ?4 AND status = 'settling'", status, error, now, saleId)).changes === 1
  );
}

/** `merchantId`'s sale by its transaction signature. */
export async function merchantSaleBySignature(db: Store, merchantId: string, signature: string): Promise<SaleRow | null> {
  return await db.get<SaleRow>('SELECT * FROM x402_sales WHERE merchant_id = ? AND signature = ?', merchantId, signature);
}

/** Marks a sale as the merchant's to refund (the first reason stands); false when it was marked already. */
export async function markRefundDue(db: Store, saleId: string, reason: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE x402_sales SET refund_due_reason = ?, refund_due_at = ?, updated_at = ? WHERE sale_id = ? AND refund_due_at IS NULL', reason, now, now, saleId)).changes === 1;
}

/** Sales still waiting for the chain, oldest first. */
export async function settlingSales(db: Store, limit: number): Promise<SaleRow[]> {
  return await db.all<SaleRow>("SELECT * FROM x402_sales WHERE status = 'settling' ORDER BY created_at LIMIT ?", limit);
}

