/** The operator's fee on merchants' x402 sales: per-merchant counters, invoices and the payments found for them (migration 0014); what each sale costs the fee payer, per seller (0015). */
import type { Database } from 'bun:sqlite';

export interface FeeAccount {
  accrued: bigint;
  paid: bigint;
}

export interface InvoiceRow {
  invoice_id: string;
  merchant_id: string;
  amount: bigint;
  reference_key: string;
  status: 'open' | 'paid';
  scan_cursor: string | null;
  created_at: bigint;
  updated_at: bigint;
  paid_at: bigint | null;
}

export interface FeePaymentRow {
  signature: string;
  invoice_id: string;
  amount: bigint;
  payer: string | null;
  created_at: bigint;
}

export function feeAccount(db: Database, merchantId: string): FeeAccount {
  return db.query<FeeAccount, [string]>('SELECT accrued, paid FROM sale_fee_accounts WHERE merchant_id = ?').get(merchantId) ?? { accrued: 0n, paid: 0n };
}

/** Adds `delta` to what `merchantId`'s sales owe; inside the completed sale's write transaction. */
export function accrueSaleFee(db: Database, merchantId: string, delta: bigint, now: number): void {
  if (delta === 0n) return;
  db.query(
    `INSERT INTO sale_fee_accounts (merchant_id, accrued, updated_at) VALUES (?1, max(?2, 0), ?3)
     ON CONFLICT (merchant_id) DO UPDATE SET accrued = accrued + ?2, updated_at = ?3`,
  ).run(merchantId, delta, now);
}

export function openInvoiceOf(db: Database, merchantId: string): InvoiceRow | null {
  return db.query<InvoiceRow, [string]>("SELECT * FROM sale_fee_invoices WHERE merchant_id = ? AND status = 'open'").get(merchantId);
}

export function getInvoice(db: Database, invoiceId: string): InvoiceRow | null {
  return db.query<InvoiceRow, [string]>('SELECT * FROM sale_fee_invoices WHERE invoice_id = ?').get(invoiceId);
}

/** `merchantId`'s newest invoice, open or paid. */
export function latestInvoiceOf(db: Database, merchantId: string): InvoiceRow | null {
  return db.query<InvoiceRow, [string]>('SELECT * FROM sale_fee_invoices WHERE merchant_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1').get(merchantId);
}

/** Open invoices, least recently looked at first. */
export function openInvoices(db: Database, limit: number): InvoiceRow[] {
  return db.query<InvoiceRow, [number]>("SELECT * FROM sale_fee_invoices WHERE status = 'open' ORDER BY updated_at LIMIT ?").all(limit);
}

export function insertInvoice(db: Database, i: { invoice_id: string; merchant_id: string; amount: bigint; reference_key: string; now: number }): void {
  db.query("INSERT INTO sale_fee_invoices (invoice_id, merchant_id, amount, reference_key, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'open', ?, ?)").run(
    i.invoice_id,
    i.merchant_id,
    i.amount,
    i.reference_key,
    i.now,
    i.now,
  );
}

/** An open invoice asks for what is owed now (its reference key, and so any payment already made to it, stays). */
export function setInvoiceAmount(db: Database, invoiceId: string, amount: bigint, now: number): void {
  db.query("UPDATE sale_fee_invoices SET amount = ?, updated_at = ? WHERE invoice_id = ? AND status = 'open'").run(amount, now, invoiceId);
}

export function setInvoiceCursor(db: Database, invoiceId: string, signature: string, now: number): void {
  db.query('UPDATE sale_fee_invoices SET scan_cursor = ?, updated_at = ? WHERE invoice_id = ?').run(signature, now, invoiceId);
}

/**
 * Records a landed transfer to the treasury carrying the invoice's reference key, once per
 * signature, and credits the merchant (beyond what is owed, it pays the next sales' fees); the
 * invoice is paid when what it received covers it.
 * Returns false when the signature was recorded already. Inside a write transaction.
 */
export function recordFeePayment(db: Database, p: { signature: string; invoice: InvoiceRow; amount: bigint; payer: string | null; now: number }): boolean {
  const inserted = db
    .query('INSERT INTO sale_fee_payments (signature, invoice_id, merchant_id, amount, payer, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (signature) DO NOTHING')
    .run(p.signature, p.invoice.invoice_id, p.invoice.merchant_id, p.amount, p.payer, p.now).changes === 1;
  if (!inserted) return false;
  db.query(
    `INSERT INTO sale_fee_accounts (merchant_id, paid, updated_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (merchant_id) DO UPDATE SET paid = paid + ?2, updated_at = ?3`,
  ).run(p.invoice.merchant_id, p.amount, p.now);
  // Paid when it received what it asked, or when nothing is owed any more (it paid more than it was asked).
  db.query(
    `UPDATE sale_fee_invoices SET status = 'paid', paid_at = ?1, updated_at = ?1
     WHERE invoice_id = ?2 AND status = 'open'
       AND ((SELECT SUM(amount) FROM sale_fee_payments WHERE invoice_id = ?2) >= amount
            OR (SELECT accrued <= paid FROM sale_fee_accounts WHERE merchant_id = ?3))`,
  ).run(p.now, p.invoice.invoice_id, p.invoice.merchant_id);
  return true;
}

export function invoicePayments(db: Database, invoiceId: string): FeePaymentRow[] {
  return db.query<FeePaymentRow, [string]>('SELECT signature, invoice_id, amount, payer, created_at FROM sale_fee_payments WHERE invoice_id = ? ORDER BY created_at, rowid').all(invoiceId);
}

/** One merchant's line of the operator's receivables. */
export interface ReceivableRow {
  merchant_id: string;
  username: string;
  accrued: bigint;
  paid: bigint;
  invoice_id: string | null;
  invoice_amount: bigint | null;
  updated_at: bigint;
}

/** What each merchant's sales owe the operator, most owed first (the operator's `admin sale-fees`). */
export function receivables(db: Database, limit: number): ReceivableRow[] {
  return db
    .query<ReceivableRow, [number]>(
      `SELECT a.merchant_id, m.username, a.accrued, a.paid, i.invoice_id, i.amount AS invoice_amount, a.updated_at
       FROM sale_fee_accounts a
       JOIN merchants m ON m.merchant_id = a.merchant_id
       LEFT JOIN sale_fee_invoices i ON i.merchant_id = a.merchant_id AND i.status = 'open'
       ORDER BY max(a.accrued - a.paid, 0) DESC, a.updated_at DESC
       LIMIT ?`,
    )
    .all(limit);
}

/** Counts what a sale will cost the fee payer against its seller (migration 0015); inside the sale's write transaction. */
export function recordNetworkCost(db: Database, c: { sale_id: string; seller_id: string; lamports: bigint; now: number }): void {
  db.query('INSERT INTO sale_network_costs (sale_id, seller_id, lamports, created_at) VALUES (?, ?, ?, ?)').run(c.sale_id, c.seller_id, c.lamports, c.now);
}

/** What `sellerId`'s sales since `since` cost (or will cost) the fee payer, in lamports. */
export function networkCostSince(db: Database, sellerId: string, since: number): bigint {
  return db.query<{ lamports: bigint | null }, [string, number]>('SELECT SUM(lamports) AS lamports FROM sale_network_costs WHERE seller_id = ? AND created_at > ?').get(sellerId, since)?.lamports ?? 0n;
}

/** What all sellers' sales since `since` cost (or will cost) the fee payer, in lamports. */
export function totalNetworkCostSince(db: Database, since: number): bigint {
  return db.query<{ lamports: bigint | null }, [number]>('SELECT SUM(lamports) AS lamports FROM sale_network_costs WHERE created_at > ?').get(since)?.lamports ?? 0n;
}

/** Takes back a sale's cost: its transaction never landed, so the fee payer paid nothing. */
export function releaseNetworkCost(db: Database, saleId: string): void {
  db.query('DELETE FROM sale_network_costs WHERE sale_id = ?').run(saleId);
}

/**
 * What `merchantId`'s sales still settling will owe once they complete. Read through the status
 * index: a merchant has few sales settling and may have many finished.
 */
export function settlingFees(db: Database, merchantId: string): bigint {
  return db.query<{ fee: bigint | null }, [string]>("SELECT SUM(fee) AS fee FROM x402_sales INDEXED BY x402_sales_status WHERE status = 'settling' AND merchant_id = ?").get(merchantId)?.fee ?? 0n;
}
