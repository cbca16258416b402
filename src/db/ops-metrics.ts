/** Cheap reads for /metrics and `admin doctor`: indexed counts of work waiting, and completions after a cursor. */
import type { Store } from './store.ts';

/** Statuses of a transaction that is not finished yet. */
export const UNFINISHED_STATUSES = ['pre_approved', 'awaiting_approval', 'approved', 'pending'] as const;

/** Unfinished transactions by status (transactions_status index). */
export async function unfinishedTxCounts(db: Store): Promise<Map<string, number>> {
  const rows = await db
    .all<{ status: string; n: bigint }>("SELECT status, count(*) AS n FROM transactions WHERE status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending') GROUP BY status");
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export interface Backlog {
  depth: number;
  /** created_at (ms) of the oldest waiting item, or null when none waits. */
  oldestAt: number | null;
}

/** Webhook messages waiting for delivery (webhook_deliveries_due index). */
export async function webhookBacklog(db: Store): Promise<Backlog> {
  const row = await db.get<{ n: bigint; oldest: bigint | null }>("SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'");
  return { depth: Number(row?.n ?? 0n), oldestAt: row?.oldest == null ? null : Number(row.oldest) };
}

/** Mail waiting in the outbox (mail_outbox_due index). */
export async function mailBacklog(db: Store): Promise<Backlog> {
  const row = await db.get<{ n: bigint; oldest: bigint | null }>("SELECT count(*) AS n, min(created_at) AS oldest FROM mail_outbox WHERE status = 'queued'");
  return { depth: Number(row?.n ?? 0n), oldestAt: row?.oldest == null ? null : Number(row.oldest) };
}

/** The transaction id in an event's JSON data (a text column on both backends). */
const EVENT_TX_ID = { sqlite: "json_extract(e.data, '$.transaction_id')", postgres: "jsonb_extract_path_text(CAST(e.data AS JSONB), 'transaction_id')" } as const;

/**
 * Outgoing payments completed since event `afterSeq`, counted from their completion events (seq
 * is the primary key, so each scrape reads only what is new): count, micro-USDC and the last seq.
 */
export async function completedPaymentsSince(db: Store, afterSeq: number): Promise<{ count: number; volume: bigint; lastSeq: number }> {
  const row = await db
    .get<{ n: bigint; volume: bigint | null; last: bigint | null }>(`SELECT count(t.transaction_id) AS n, sum(t.amount) AS volume, max(e.seq) AS last
       FROM events e LEFT JOIN transactions t ON t.transaction_id = ${EVENT_TX_ID[db.dialect]}
       WHERE e.seq > ? AND e.type IN ('payment.completed', 'withdrawal.completed')`, afterSeq);
  return { count: Number(row?.n ?? 0n), volume: row?.volume ?? 0n, lastSeq: row?.last == null ? afterSeq : Number(row.last) };
}

/** Fee-paying transfers completed since `since` (ms), and how many created a token account: the fee payer's recent spend. */
export async function recentCompletedTransfers(db: Store, since: number): Promise<{ transfers: number; accountSetups: number }> {
  const row = await db
    .get<{ n: bigint; setups: bigint | null }>("SELECT count(*) AS n, sum(CASE WHEN setup_fee > 0 THEN 1 ELSE 0 END) AS setups FROM transactions WHERE status = 'completed' AND direction = 'out' AND completed_at >= ?", since);
  return { transfers: Number(row?.n ?? 0n), accountSetups: Number(row?.setups ?? 0n) };
}
