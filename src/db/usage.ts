/**
 * What the ledger says a wallet has spent or reserved, in the shape the guard-rails engine
 * takes. An outgoing transaction counts from creation until it is rejected, cancelled, expired
 * or failed: creating the intent reserves its budget, and those statuses release it.
 * One scan of the wallet's outgoing rows computes every window and category at once.
 */
import type { Database } from 'bun:sqlite';
import { CATEGORIES, type Usage, type WindowStarts } from '../domain/guardrails.ts';

const COUNTING = "('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')";
const COST = 'amount + fee + setup_fee';
// Withdrawals count only in their category (see decide()).
const SPEND = `type != 'withdrawal'`;

const perCategory = CATEGORIES.map(
  (c) =>
    `coalesce(sum(CASE WHEN category = '${c}' AND created_at >= $daily THEN ${COST} END), 0) AS ${c}_daily,
     coalesce(sum(CASE WHEN category = '${c}' AND created_at >= $monthly THEN ${COST} END), 0) AS ${c}_monthly`,
).join(',\n');

const USAGE_SQL = `
  SELECT
    coalesce(sum(CASE WHEN ${SPEND} AND created_at >= $daily THEN ${COST} END), 0) AS daily,
    coalesce(sum(CASE WHEN ${SPEND} AND created_at >= $weekly THEN ${COST} END), 0) AS weekly,
    coalesce(sum(CASE WHEN ${SPEND} AND created_at >= $monthly THEN ${COST} END), 0) AS monthly,
    coalesce(sum(CASE WHEN ${SPEND} THEN ${COST} END), 0) AS total,
    count(CASE WHEN ${SPEND} AND created_at >= $daily THEN 1 END) AS payments_today,
    count(CASE WHEN status = 'completed' AND (to_address = $address OR counterparty = $label) THEN 1 END) AS known,
    ${perCategory}
  FROM transactions
  WHERE wallet_id = $wallet AND direction = 'out' AND status IN ${COUNTING}`;

/** Usage since each window start. */
export function computeUsage(db: Database, walletId: string, starts: WindowStarts, recipient: { username?: string; address: string }): Usage {
  const row = db.query<Record<string, bigint>, [Record<string, string | number>]>(USAGE_SQL).get({
    wallet: walletId,
    daily: starts.daily.getTime(),
    weekly: starts.weekly.getTime(),
    monthly: starts.monthly.getTime(),
    address: recipient.address,
    label: recipient.username ?? recipient.address,
  })!;
  const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, { daily: row[`${c}_daily`] ?? 0n, monthly: row[`${c}_monthly`] ?? 0n }])) as Usage['by_category'];
  return {
    daily: row.daily ?? 0n,
    weekly: row.weekly ?? 0n,
    monthly: row.monthly ?? 0n,
    total: row.total ?? 0n,
    by_category: byCategory,
    payments_today: Number(row.payments_today ?? 0n),
    recipient_known: (row.known ?? 0n) > 0n,
  };
}
