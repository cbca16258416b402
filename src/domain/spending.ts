/**
 * What the owner's pages show of a wallet's spending, computed from the same numbers the guard
 * rails decide on (domain/guardrails.ts `windowStarts`, db/usage.ts `computeUsage`): the budget
 * bars, the 30-day chart's days, and the one way an amount is written as amount + fee = total.
 * Pure: data in, figures out; money stays integer micro-USDC, formatted only by `formatUsdc`.
 */
import { CATEGORIES, windowStarts, type GuardRails, type Usage } from './guardrails.ts';
import { formatUsdc } from './money.ts';

/** The budget windows a bar can show, in the order the page lists them. */
export const BUDGET_WINDOWS = ['daily', 'weekly', 'monthly', 'total'] as const;
/** One budget window (`budgets.<window>`). */
export type BudgetWindow = (typeof BUDGET_WINDOWS)[number];

const WINDOW_NAMES: Record<BudgetWindow, string> = { daily: 'Today', weekly: 'This week', monthly: 'This month', total: 'Lifetime' };

/** One bar: what the window's rule (`budgets.daily`, …) would count now against its limit. */
export interface BudgetBar {
  window: BudgetWindow;
  /** "Today", "This week", "Today, x402", "Payments today" … */
  label: string;
  /** The rule's name as decisions and the rails document spell it. */
  rule: string;
  /** Micro-USDC (amount + fees), or a number of payments (`max_payments_per_day`). */
  unit: 'usdc' | 'payments';
  used: bigint;
  /** null: the rails set no such budget (the bar shows the spending alone). */
  limit: bigint | null;
  /** Whole percent of the limit used, floored; may exceed 100 (reserved spending over a lowered limit). null without a limit. */
  percent: number | null;
}

/**
 * The bars of the wallet page: today, this week and this month always (with or without a budget),
 * the lifetime total only when a total budget is set; then the daily count and each category cap
 * the rails set — every window `decide` checks as a budget (guardrails.ts budgetOverrun). `usage`
 * is computeUsage's answer for the rails' own window starts, so a bar is what `decide` would read.
 */
export function budgetBars(rails: GuardRails, usage: Usage): BudgetBar[] {
  const bar = (window: BudgetWindow, label: string, rule: string, unit: BudgetBar['unit'], used: bigint, limit: bigint | null): BudgetBar => ({
    window,
    label,
    rule,
    unit,
    used,
    limit,
    percent: limit === null ? null : percentOf(used, limit),
  });
  const bars = BUDGET_WINDOWS.filter((w) => w !== 'total' || rails.budgets?.total !== undefined).map((w) => bar(w, WINDOW_NAMES[w], `budgets.${w}`, 'usdc', usage[w], rails.budgets?.[w] ?? null));
  if (rails.max_payments_per_day !== undefined) bars.push(bar('daily', 'Payments today', 'max_payments_per_day', 'payments', BigInt(usage.payments_today), BigInt(rails.max_payments_per_day)));
  for (const c of CATEGORIES) {
    const cap = rails.category_caps?.[c];
    for (const w of ['daily', 'monthly'] as const) {
      const limit = cap?.[w];
      if (limit !== undefined) bars.push(bar(w, `${WINDOW_NAMES[w]}, ${c}`, `category_caps.${c}.${w}`, 'usdc', usage.by_category[c][w], limit));
    }
  }
  return bars;
}

/** Whole percent of `limit` that `used` is, floored, in integers (a limit of 0 with spending is 100 %). */
export function percentOf(used: bigint, limit: bigint): number {
  if (limit <= 0n) return used > 0n ? 100 : 0;
  return Number((used * 100n) / limit);
}

/** One day of the chart: local day start (the guard rails' day) and its spending by kind. */
export interface SpendDay {
  /** The instant the day starts in the rails' time zone. */
  start: Date;
  /** YYYY-MM-DD of that local day. */
  date: string;
  /** Payments (wallet, merchant and paylink categories): amount + fees, micro-USDC. */
  payments: bigint;
  /** x402 purchases: amount + fees, micro-USDC. */
  x402: bigint;
}

/**
 * The starts of the last `days` local days ending with the one containing `now`, oldest first,
 * by the same rule as the daily budget window (each day's start is `windowStarts` of the
 * instant before the next day's start).
 */
export function dayStarts(now: Date, timezone: string, days: number): Date[] {
  const out: Date[] = [windowStarts(now, timezone).daily];
  while (out.length < days) out.unshift(windowStarts(new Date(out[0]!.getTime() - 1), timezone).daily);
  return out;
}

/** A spending sum at an instant (created_at in ms) of one category, as the ledger reads it. */
export interface SpendPoint {
  at: number;
  category: string;
  cost: bigint;
}

/**
 * Sums `points` into the days that start at `starts` (oldest first; the last day runs on),
 * payments and x402 apart. Withdrawals and points before the first day are left out, as the
 * budgets leave them out.
 */
export function spendByDay(starts: Date[], points: SpendPoint[], timezone: string): SpendDay[] {
  const days: SpendDay[] = starts.map((s) => ({ start: s, date: localDate(s, timezone), payments: 0n, x402: 0n }));
  for (const p of points) {
    if (p.category === 'withdrawal') continue;
    let i = days.length - 1;
    while (i >= 0 && p.at < days[i]!.start.getTime()) i--;
    if (i < 0) continue;
    if (p.category === 'x402') days[i]!.x402 += p.cost;
    else days[i]!.payments += p.cost;
  }
  return days;
}

function localDate(at: Date, timezone: string): string {
  // en-CA writes dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

/** The parts of an outgoing amount, micro-USDC. */
export interface MoneyParts {
  amount: bigint;
  fee: bigint;
  setup_fee: bigint;
}

/**
 * The one way the owner's pages and mails write what a payment costs: "12.5 + 0.0625 fee = 12.5625 USDC",
 * with the account setup fee as its own term when there is one. The total is what the budgets count.
 */
export function amountFeeTotal(m: MoneyParts): string {
  const total = m.amount + m.fee + m.setup_fee;
  const setup = m.setup_fee > 0n ? ` + ${formatUsdc(m.setup_fee)} account setup` : '';
  return `${formatUsdc(m.amount)} + ${formatUsdc(m.fee)} fee${setup} = ${formatUsdc(total)} USDC`;
}
