/** The operator's fee on merchants' x402 sales: per-merchant counters, invoices and the payments found for them (migration 0014); what each sale costs the fee payer, per seller (0015). */
import type { Store } from './store.ts';

/** Break ties of created_at: SQLite's rowid is insertion order; PostgreSQL has no rowid, so ties order by the primary key there. */
const INVOICE_TIE = { sqlite: 'rowid', postgres: 'invoice_id' } as const;
const PAYMENT_TIE = { sqlite: 'rowid', postgres: 'signature' } as const;

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

export async function feeAccount(db: Store, merchantId: string): Promise<FeeAccount> {
  return (await db.get<FeeAccount>('SELECT accrued, paid FROM sale_fee_accounts WHERE merchant_id = ?', merchantId)) ?? { accrued: 0n, paid: 0n };
}

/** Adds `delta` to what `merchantId`'s sales owe; inside the completed sale's write transaction. */
export async function accrueSaleFee(db: Store, merchantId: string, delta: bigint, now: number): Promise<void> {
  if (delta === 0n) return;
  await db.run(`INSERT INTO sale_fee_accounts (merchant_id, accrued, updated_at) VALUES (?1, max(?2, 0), ?3)
     ON CONFLICT (merchant_id) DO UPDATE SET accrued = sale_fee_accounts.accrued + ?2, updated_at = ?3`, merchantId, delta, now);
}

export async function openInvoiceOf(db: Store, merchantId: string): Promise<InvoiceRow | null> {
  return await db.get<InvoiceRow>("SELECT * FROM sale_fee_invoices WHERE merchant_id = ? AND status = 'open'", merchantId);
}

export async function getInvoice(db: Store, invoiceId: string): Promise<InvoiceRow | null> {
  return await db.get<InvoiceRow>('SELECT * FROM sale_fee_invoices WHERE invoice_id = ?', invoiceId);
}

/** `merchantId`'s newest invoice, open or paid. */
export async function latestInvoiceOf(db: Store, merchantId: string): Promise<InvoiceRow | null> {
  return await db.get<InvoiceRow>(`SELECT * FROM sale_fee_invoices WHERE merchant_id = ? ORDER BY created_at DESC, ${INVOICE_TIE[db.dialect]} DESC LIMIT 1`, merchantId);
}

/** Open invoices, least recently looked at first. */
export async function openInvoices(db: Store, limit: number): Promise<InvoiceRow[]> {
  return await db.all<InvoiceRow>("SELECT * FROM sale_fee_invoices WHERE status = 'open' ORDER BY updated_at LIMIT ?", limit);
}

export async function insertInvoice(db: Store, i: { invoice_id: string; merchant_id: string; amount: bigint; reference_key: string; now: number }): Promise<void> {
  await db.run("INSERT INTO sale_fee_invoices (invoice_id, merchant_id, amount, reference_key, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'open', ?, ?)", i.invoice_id,
    i.merchant_id,
    i.amount,
    i.reference_key,
    i.now,
    i.now,
  );
}

/** An open invoice asks for what is owed now (its reference key, and so any payment already made to it, stays). */
export async function setInvoiceAmount(db: Store, invoiceId: string, amount: bigint, now: number): Promise<void> {
  await db.run("UPDATE sale_fee_invoices SET amount = ?, updated_at = ? WHERE invoice_id = ? AND status = 'open'", amount, now, invoiceId);
}

export async function setInvoiceCursor(db: Store, invoiceId: string, signature: string, now: number): Promise<void> {
  await db.run('UPDATE sale_fee_invoices SET scan_cursor = ?, updated_at = ? WHERE invoice_id = ?', signature, now, invoiceId);
}

/**
 * Records a landed transfer to the treasury carrying the invoice's reference key, once per
 * signature, and credits the merchant (beyond what is owed, it pays the next sales' fees); the
 * invoice is paid when what it received covers it.
 * Returns false when the signature was recorded already. Inside a write transaction.
 */
export async function recordFeePayment(db: Store, p: { signature: string; invoice: InvoiceRow; amount: bigint; payer: string | null; now: number }): Promise<boolean> {
  const inserted = (await db
    .run('INSERT INTO sale_fee_payments (signature, invoice_id, merchant_id, amount, payer, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (signature) DO NOTHING', p.signature, p.invoice.invoice_id, p.invoice.merchant_id, p.amount, p.payer, p.now)).changes === 1;
  if (!inserted) return false;
  await db.run(`INSERT INTO sale_fee_accounts (merchant_id, paid, updated_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (merchant_id) DO UPDATE SET paid = sale_fee_accounts.paid + ?2, updated_at = ?3`, p.invoice.merchant_id, p.amount, p.now);
  // Paid when it received what it asked, or when nothing is owed any more (it paid more than it was asked).
  await db.run(`UPDATE sale_fee_invoices SET status = 'paid', paid_at = ?1, updated_at = ?1
     WHERE invoice_id = ?2 AND status = 'open'
       AND ((SELECT SUM(amount) FROM sale_fee_payments WHERE invoice_id = ?2) >= amount
            OR (SELECT accrued <= paid FROM sale_fee_accounts WHERE merchant_id = ?3))`, p.now, p.invoice.invoice_id, p.invoice.merchant_id);
  return true;
}

export async function invoicePayments(db: Store, invoiceId: string): Promise<FeePaymentRow[]> {
  return await db.all<FeePaymentRow>(`SELECT signature, invoice_id, amount, payer, created_at FROM sale_fee_payments WHERE invoice_id = ? ORDER BY created_at, ${PAYMENT_TIE[db.dialect]}`, invoiceId);
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
export async function receivables(db: Store, limit: number): Promise<ReceivableRow[]> {
  return await db
    .all<ReceivableRow>(`SELECT a.merchant_id, m.username, a.accrued, a.paid, i.invoice_id, i.amount AS invoice_amount, a.updated_at
       FROM sale_fee_accounts a
       JOIN merchants m ON m.merchant_id = a.merchant_id
       LEFT JOIN sale_fee_invoices i ON i.merchant_id = a.merchant_id AND i.status = 'open'
       ORDER BY max(a.accrued - a.paid, 0) DESC, a.updated_at DESC
       LIMIT ?`, limit);
}

/** Counts what a sale will cost the fee payer against its seller (migration 0015); inside the sale's write transaction. */
export async function recordNetworkCost(db: Store, c: { sale_id: string; seller_id: string; lamports: bigint; now: number }): Promise<void> {
  await db.run('INSERT INTO sale_network_costs (sale_id, seller_id, lamports, created_at) VALUES (?, ?, ?, ?)', c.sale_id, c.seller_id, c.lamports, c.now);
}

/** What `sellerId`'s sales since `since` cost (or will cost) the fee payer, in lamports. */
export async function networkCostSince(db: Store, sellerId: string, since: number): Promise<bigint> {
  return (await db.get<{ lamports: bigint | null }>('SELECT SUM(lamports) AS lamports FROM sale_network_costs WHERE seller_id = ? AND created_at > ?', sellerId, since))?.lamports ?? 0n;
}

/** What all sellers' sales since `since` cost (or will cost) the fee payer, in lamports. */
export async function totalNetworkCostSince(db: Store, since: number): Promise<bigint> {
  return (await db.get<{ lamports: bigint | null }>('SELECT SUM(lamports) AS lamports FROM sale_network_costs WHERE created_at > ?', since))?.lamports ?? 0n;
}

/** Takes back a sale's cost: its transaction never landed, so the fee payer paid nothing. */
export async function releaseNetworkCost(db: Store, saleId: string): Promise<void> {
  await db.run('DELETE FROM sale_network_costs WHERE sale_id = ?', saleId);
}

/**
 * Where settlingFees reads: on SQLite through the status index (a merchant has few sales settling and
 * may have many finished); PostgreSQL takes no planner hints and weighs the indexes on its statistics.
 */
const SETTLING_SALES = { sqlite: 'x402_sales INDEXED BY x402_sales_status', postgres: 'x402_sales' } as const;

/** What `merchantId`'s sales still settling will owe once they complete. */
export async function settlingFees(db: Store, merchantId: string): Promise<bigint> {
  return (await db.get<{ fee: bigint | null }>(`SELECT SUM(fee) AS fee FROM ${SETTLING_SALES[db.dialect]} WHERE status = 'settling' AND merchant_id = ?`, merchantId))?.fee ?? 0n;
}
