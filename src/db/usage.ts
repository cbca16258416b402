/**
 * What the ledger says a wallet has spent or reserved, in the shape the guard-rails engine
 * takes. An outgoing transaction counts from creation until it is rejected, cancelled, expired
 * or failed: creating the intent reserves its budget, and those statuses release it.
 */
import type { Database } from 'bun:sqlite';
import { CATEGORIES, type Category, type Usage, type WindowStarts } from '../domain/guardrails.ts';

const COUNTING = "('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')";

/** Usage since each window start; withdrawals count only in their category (see decide()). */
export function computeUsage(db: Database, walletId: string, starts: WindowStarts, recipient: { username?: string; address: string }): Usage {
  const spent = (since: number, spendingOnly: boolean) =>
    (db
      .query<{ s: bigint | null }, [string, number]>(
        `SELECT sum(amount + fee + setup_fee) AS s FROM transactions
         WHERE wallet_id = ? AND direction = 'out' AND status IN ${COUNTING} AND created_at >= ?${spendingOnly ? " AND type != 'withdrawal'" : ''}`,
      )
      .get(walletId, since)?.s ?? 0n) as bigint;
  const byCategory = {} as Usage['by_category'];
  for (const c of CATEGORIES) {
    const row = db
      .query<{ d: bigint | null; m: bigint | null }, [number, number, string, Category]>(
        `SELECT sum(CASE WHEN created_at >= ? THEN amount + fee + setup_fee END) AS d, sum(CASE WHEN created_at >= ? THEN amount + fee + setup_fee END) AS m
         FROM transactions WHERE wallet_id = ? AND direction = 'out' AND status IN ${COUNTING} AND category = ?`,
      )
      .get(starts.daily.getTime(), starts.monthly.getTime(), walletId, c);
    byCategory[c] = { daily: row?.d ?? 0n, monthly: row?.m ?? 0n };
  }
  const count = db
    .query<{ n: bigint }, [string, number]>(
      `SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND direction = 'out' AND type != 'withdrawal' AND status IN ${COUNTING} AND created_at >= ?`,
    )
    .get(walletId, starts.daily.getTime());
  const known = db
    .query<{ n: bigint }, [string, string, string]>(
      "SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND direction = 'out' AND status = 'completed' AND (to_address = ? OR counterparty = ?)",
    )
    .get(walletId, recipient.address, recipient.username ?? recipient.address);
  return {
    daily: spent(starts.daily.getTime(), true),
    weekly: spent(starts.weekly.getTime(), true),
    monthly: spent(starts.monthly.getTime(), true),
    total: spent(0, true),
    by_category: byCategory,
    payments_today: Number(count?.n ?? 0n),
    recipient_known: Number(known?.n ?? 0n) > 0,
  };
}
