/** Cheap reads for /metrics and `admin doctor`: indexed counts of work waiting, and completions after a cursor. */
import type { Database } from 'bun:sqlite';

/** Statuses of a transaction that is not finished yet. */
export const UNFINISHED_STATUSES = ['pre_approved', 'awaiting_approval', 'approved', 'pending'] as const;

/** Unfinished transactions by status (transactions_status index). */
export function unfinishedTxCounts(db: Database): Map<string, number> {
  const rows = db
    .query<{ status: string; n: bigint }, []>("SELECT status, count(*) AS n FROM transactions WHERE status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending') GROUP BY status")
    .all();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export interface Backlog {
  depth: number;
  /** created_at (ms) of the oldest waiting item, or null when none waits. */
  oldestAt: number | null;
}

/** Webhook messages waiting for delivery (webhook_deliveries_due index). */
export function webhookBacklog(db: Database): Backlog {
  const row = db.query<{ n: bigint; oldest: bigint | null }, []>("SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'").get();
  return { depth: Number(row?.n ?? 0n), oldestAt: row?.oldest == null ? null : Number(row.oldest) };
}

/** Mail waiting in the outbox (mail_outbox_due index). */
export function mailBacklog(db: Database): Backlog {
  const row = db.query<{ n: bigint; oldest: bigint | null }, []>("SELECT count(*) AS n, min(created_at) AS oldest FROM mail_outbox WHERE status = 'queued'").get();
  return { depth: Number(row?.n ?? 0n), oldestAt: row?.oldest == null ? null : Number(row.oldest) };
}

/**
 * Outgoing payments completed since event `afterSeq`, counted from their completion events (seq
 * is the primary key, so each scrape reads only what is new): count, micro-USDC and the last seq.
 */
export function completedPaymentsSince(db: Database, afterSeq: number): { count: number; volume: bigint; lastSeq: number } {
  const row = db
    .query<{ n: bigint; volume: bigint | null; last: bigint | null }, [number]>(
      `SELECT count(t.transaction_id) AS n, sum(t.amount) AS volume, max(e.seq) AS last
       FROM events e LEFT JOIN transactions t ON t.transaction_id = json_extract(e.data, '$.transaction_id')
       WHERE e.seq > ? AND e.type IN ('payment.completed', 'withdrawal.completed')`,
    )
    .get(afterSeq);
  return { count: Number(row?.n ?? 0n), volume: row?.volume ?? 0n, lastSeq: row?.last == null ? afterSeq : Number(row.last) };
}

/** Fee-paying transfers completed since `since` (ms), and how many created a token account: the fee payer's recent spend. */
export function recentCompletedTransfers(db: Database, since: number): { transfers: number; accountSetups: number } {
  const row = db
    .query<{ n: bigint; setups: bigint | null }, [number]>(
      "SELECT count(*) AS n, sum(setup_fee > 0) AS setups FROM transactions WHERE status = 'completed' AND direction = 'out' AND completed_at >= ?",
    )
    .get(since);
  return { transfers: Number(row?.n ?? 0n), accountSetups: Number(row?.setups ?? 0n) };
}
