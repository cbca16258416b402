/**
 * Reads for the owner's pages only (nothing here writes): a wallet's spending per 15-minute bucket
 * for the 30-day chart, and what an approval's transaction says (amount, fees, the agent's note or
 * reason) for the approval rows, page and mail.
 */
import type { Store } from './store.ts';

/** The trigger-kept buckets of wallet_spend_windows are created_at / 900000 (migration 0002). */
const BUCKET_MS = 900_000;

/**
 * Budget spending (withdrawals excluded, as the budgets exclude them) per 15-minute bucket and
 * category since `since` (ms), from the same trigger-kept rows `computeUsage` sums: `at` is the
 * bucket's start. At most 96 rows a day per category, whatever the number of payments.
 */
export async function spendBuckets(db: Store, walletId: string, since: number): Promise<{ at: number; category: string; cost: bigint }[]> {
  const rows = await db.all<{ bucket: bigint | number; category: string; cost: bigint | number }>(
    'SELECT bucket, category, cost FROM wallet_spend_windows WHERE wallet_id = ? AND spend = 1 AND bucket >= ? AND cost > 0 ORDER BY bucket',
    walletId,
    Math.floor(since / BUCKET_MS),
  );
  return rows.map((r) => ({ at: Number(r.bucket) * BUCKET_MS, category: r.category, cost: BigInt(r.cost) }));
}

/** What the owner reads beside an approval: the transaction's money and the agent's own words. */
export interface ApprovalSubject {
  approval_id: string;
  amount: bigint;
  fee: bigint;
  setup_fee: bigint;
  /** The agent's note on a payment or x402 purchase, or a withdrawal's reason; null when it gave none. */
  agent_reason: string | null;
}

/** The subjects of `approvalIds` (those whose transaction exists), keyed by approval id. */
export async function approvalSubjects(db: Store, approvalIds: readonly string[]): Promise<Map<string, ApprovalSubject>> {
  const out = new Map<string, ApprovalSubject>();
  if (approvalIds.length === 0) return out;
  const marks = approvalIds.map(() => '?').join(', ');
  const rows = await db.all<{ approval_id: string; amount: bigint; fee: bigint; setup_fee: bigint; note: string | null; reason: string | null }>(
    `SELECT a.approval_id, t.amount, t.fee, t.setup_fee, t.note, w.reason
       FROM approvals a JOIN transactions t ON t.transaction_id = a.subject_id
       LEFT JOIN withdrawals w ON w.transaction_id = t.transaction_id
      WHERE a.approval_id IN (${marks})`,
    ...approvalIds,
  );
  for (const r of rows) {
    const words = (r.reason ?? r.note ?? '').trim();
    out.set(r.approval_id, { approval_id: r.approval_id, amount: BigInt(r.amount), fee: BigInt(r.fee), setup_fee: BigInt(r.setup_fee), agent_reason: words === '' ? null : words });
  }
  return out;
}
