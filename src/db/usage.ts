/**
 * What the ledger says a wallet has spent or reserved, in the shape the guard-rails engine
 * takes. An outgoing transaction counts from creation until it is rejected, cancelled, expired
 * or failed: creating the intent reserves its budget, and those statuses release it.
 * Triggers on transactions keep the lifetime total (wallet_spend) and the spend per 15-minute
 * bucket and category (wallet_spend_windows), so the windows are a sum over at most a month of
 * buckets and the known-recipient check is one indexed lookup: the cost of an intent does not
 * grow with the wallet's history. A window start off the bucket grid is summed from the rows.
 */
import type { Store } from './store.ts';
import { CATEGORIES, type Usage, type WindowStarts } from '../domain/guardrails.ts';

const COUNTING = "('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')";
const COST = 'amount + fee + setup_fee';
// Withdrawals count only in their category (see decide()).
const SPEND = `type != 'withdrawal'`;

/** Window starts on a BUCKET_MS boundary (every real time zone's) are read from the trigger-kept buckets. */
const BUCKET_MS = 900_000;

const perCategory = (table: 'transactions' | 'buckets') =>
  CATEGORIES.map((c) => {
    const [cost, at] = table === 'buckets' ? ['cost', 'bucket'] : [COST, 'created_at'];
    return `coalesce(sum(CASE WHEN category = '${c}' AND ${at} >= $daily THEN ${cost} END), 0) AS ${c}_daily,
     coalesce(sum(CASE WHEN category = '${c}' AND ${at} >= $monthly THEN ${cost} END), 0) AS ${c}_monthly`;
  }).join(',\n');

/** From the buckets: one row per 15 minutes, category and kind, whatever the number of payments. */
const BUCKETS_SQL = `
  SELECT
    coalesce(sum(CASE WHEN spend = 1 AND bucket >= $daily THEN cost END), 0) AS daily,
    coalesce(sum(CASE WHEN spend = 1 AND bucket >= $weekly THEN cost END), 0) AS weekly,
    coalesce(sum(CASE WHEN spend = 1 AND bucket >= $monthly THEN cost END), 0) AS monthly,
    coalesce(sum(CASE WHEN spend = 1 AND bucket >= $daily THEN n END), 0) AS payments_today,
    ${perCategory('buckets')}
  FROM wallet_spend_windows
  WHERE wallet_id = $wallet AND bucket >= $earliest`;

/** From the ledger rows themselves, for a window start off the bucket grid (exact for any instant). */
const ROWS_SQL = `
  SELECT
    coalesce(sum(CASE WHEN ${SPEND} AND created_at >= $daily THEN ${COST} END), 0) AS daily,
    coalesce(sum(CASE WHEN ${SPEND} AND created_at >= $weekly THEN ${COST} END), 0) AS weekly,
    coalesce(sum(CASE WHEN ${SPEND} AND created_at >= $monthly THEN ${COST} END), 0) AS monthly,
    count(CASE WHEN ${SPEND} AND created_at >= $daily THEN 1 END) AS payments_today,
    ${perCategory('transactions')}
  FROM transactions
  WHERE wallet_id = $wallet AND created_at >= $earliest AND direction = 'out' AND status IN ${COUNTING}`;

const TOTAL_SQL = 'SELECT total FROM wallet_spend WHERE wallet_id = ?';

// A username always names the same address (wallet addresses and payout addresses never change),
// so a completed payment to the address is a completed payment to the recipient, however named.
const KNOWN_SQL = "SELECT 1 FROM transactions WHERE wallet_id = ? AND to_address = ? AND status = 'completed' AND direction = 'out' LIMIT 1";

// x402 spending at one host since the day's start: the purchases of the day, joined to their transactions.
const HOST_DAILY_SQL = `SELECT coalesce(sum(t.amount + t.fee + t.setup_fee), 0) AS spent
  FROM x402_purchases p JOIN transactions t ON t.transaction_id = p.transaction_id
  WHERE p.wallet_id = ? AND p.created_at >= ? AND p.host = ? AND t.status IN ${COUNTING}`;

// The same for a host only the agent names (a paid MCP tool's server): the spending at that name
// and every x402 payment to its payee, so names made up for one payee share one day's limit.
const NAMED_HOST_DAILY_SQL = `SELECT coalesce(sum(t.amount + t.fee + t.setup_fee), 0) AS spent
  FROM x402_purchases p JOIN transactions t ON t.transaction_id = p.transaction_id
  WHERE p.wallet_id = ? AND p.created_at >= ? AND (p.host = ? OR p.pay_to = ?) AND t.status IN ${COUNTING}`;

// A payee vouched for at a host: a completed purchase there paid it, fetched by the daemon itself
// (not a tool's) or approved by the owner.
const VOUCHED_SQL = `SELECT 1 FROM x402_purchases p JOIN transactions t ON t.transaction_id = p.transaction_id
  WHERE p.wallet_id = ? AND p.host = ? AND p.pay_to = ? AND t.status = 'completed' AND (p.method <> 'MCP' OR t.approval_id IS NOT NULL) LIMIT 1`;

/**
 * Usage since each window start, the lifetime total, whether `recipient.address` was paid before,
 * with `host` the x402 spending at that host today (a host the agent only names: also every x402
 * payment to the payee today), and with `hostNamedByAgent` whether the payee was vouched for at that host.
 */
async function hostDaily(db: Store, walletId: string, since: number, host: string, payee: string | null): Promise<bigint> {
  const row = payee === null ? await db.get<{ spent: bigint }>(HOST_DAILY_SQL, walletId, since, host) : await db.get<{ spent: bigint }>(NAMED_HOST_DAILY_SQL, walletId, since, host, payee);
  return row?.spent ?? 0n;
}

export async function computeUsage(db: Store, walletId: string, starts: WindowStarts, recipient: { address: string }, host?: string, hostNamedByAgent = false): Promise<Usage> {
  const [daily, weekly, monthly] = [starts.daily.getTime(), starts.weekly.getTime(), starts.monthly.getTime()];
  const onGrid = [daily, weekly, monthly].every((t) => t % BUCKET_MS === 0);
  const at = (t: number) => (onGrid ? t / BUCKET_MS : t);
  const row = (await db.get<Record<string, bigint>>(onGrid ? BUCKETS_SQL : ROWS_SQL, {
    wallet: walletId,
    daily: at(daily),
    weekly: at(weekly),
    monthly: at(monthly),
    earliest: at(Math.min(daily, weekly, monthly)),
  }))!;
  const total = (await db.get<{ total: bigint }>(TOTAL_SQL, walletId))?.total ?? 0n;
  const known = recipient.address !== '' && (await db.get(KNOWN_SQL, walletId, recipient.address)) !== null;
  const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, { daily: row[`${c}_daily`] ?? 0n, monthly: row[`${c}_monthly`] ?? 0n }])) as Usage['by_category'];
  return {
    daily: row.daily ?? 0n,
    weekly: row.weekly ?? 0n,
    monthly: row.monthly ?? 0n,
    total,
    by_category: byCategory,
    payments_today: Number(row.payments_today ?? 0n),
    recipient_known: known,
    ...(host === undefined ? {} : { x402_host_daily: await hostDaily(db, walletId, daily, host, hostNamedByAgent ? recipient.address : null) }),
    ...(host === undefined || !hostNamedByAgent ? {} : { x402_payee_vouched: (await db.get(VOUCHED_SQL, walletId, host, recipient.address)) !== null }),
  };
}
