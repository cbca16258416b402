/**
 * Guard rails (DESIGN §5): the owner's spending policy as one pure function. `decide` turns a
 * payment intent, the ledger's usage and the current time into pre_approved, awaiting_approval or
 * rejected, naming the rule that decided and the numbers behind it. No I/O; time is a parameter.
 *
 * Which rule applies to which category:
 * - everywhere: `frozen`, `valid_until`, `blocked_recipients`, `category_caps.<category>`;
 * - spending (every category except withdrawal): `max_per_payment`, `approval_above`, `budgets.*`,
 *   `max_payments_per_day`, `allowed_recipients`, `approve_new_recipients`, `active_hours`.
 *   x402 counts as spending, so an allowlist cannot be bypassed by a 402 server paying itself;
 * - x402 only: `x402_allowed_hosts`, `x402_max_per_request`, `x402_daily_per_host` (a budget window: it
 *   follows `on_budget_exceeded`);
 * - withdrawal only: `withdrawal_allowlist`; a withdrawal that is not rejected always waits for the
 *   owner (SPEC), so the owner's approval of each withdrawal replaces the spending rules.
 *
 * Limits are inclusive: an amount exactly at a limit passes, one micro-unit above trips it.
 */
import { formatUsdc } from './money.ts';

/** Payment categories, each with its own optional caps. */
export const CATEGORIES = ['wallet', 'merchant', 'paylink', 'x402', 'withdrawal'] as const;
/** One payment category. */
export type Category = (typeof CATEGORIES)[number];

/** Days of the week in ISO order (Monday first), as `active_hours.days` spells them. */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
/** One day of the week. */
export type Weekday = (typeof WEEKDAYS)[number];

/** Budget windows over the spending categories, in micro-USDC. */
export interface Budgets {
  daily?: bigint;
  weekly?: bigint;
  monthly?: bigint;
  total?: bigint;
}

/** Caps of one category, in micro-USDC. */
export interface CategoryCap {
  max_per_payment?: bigint;
  daily?: bigint;
  monthly?: bigint;
}

/**
 * Hours in which spending is pre-approved, in the owner's time zone. `start`/`end` are "HH:MM";
 * `end` is exclusive; `end < start` is an overnight range that belongs to the day it starts on;
 * `start == end` means the whole day; no days means no active minute (every payment waits).
 */
export interface ActiveHours {
  timezone: string;
  days: Weekday[];
  start: string;
  end: string;
}

/** What to do when a budget window or the daily count would be exceeded. */
export type OnBudgetExceeded = 'require_approval' | 'reject';

/**
 * The owner's guard rails of one wallet, parsed (amounts in micro-USDC). Every field is optional;
 * an absent field does not restrict. An empty allowlist allows nobody.
 */
export interface GuardRails {
  max_per_payment?: bigint;
  approval_above?: bigint;
  budgets?: Budgets;
  max_payments_per_day?: number;
  /** Default `require_approval`. */
  on_budget_exceeded?: OnBudgetExceeded;
  category_caps?: Partial<Record<Category, CategoryCap>>;
  /** Usernames (lower-case) or Solana addresses. */
  allowed_recipients?: string[];
  blocked_recipients?: string[];
  approve_new_recipients?: boolean;
  x402_max_per_request?: bigint;
  /** Never sign in (x402 sign-in-with-x) to reuse a purchase. */
  x402_sign_in_disabled?: boolean;
  /** x402 spending per host per day (window `daily`). */
  x402_daily_per_host?: bigint;
  /** Lower-case host names; `*.example.com` matches every subdomain, not example.com itself. */
  x402_allowed_hosts?: string[];
  active_hours?: ActiveHours;
  /** Spending is refused after this instant (the instant itself is still valid). */
  valid_until?: Date;
  frozen?: boolean;
  withdrawal_allowlist?: string[];
  /** Hours a loosening change waits before it applies (rails-change.ts). Default 0. */
  loosen_delay_hours?: number;
}

/** A payment about to be created. */
export interface Intent {
  category: Category;
  /** What counts against limits and budgets: amount + fee, micro-USDC. */
  amount: bigint;
  recipient: { username?: string; address: string };
  /** x402: the host of the paid URL. */
  host?: string;
  /**
   * x402: the host is only what the agent says (a paid MCP tool's server, which this service
   * never contacts), so under `x402_allowed_hosts` its payee needs the owner's word.
   */
  host_named_by_agent?: boolean;
}

/** Spent or reserved micro-USDC in the current daily and monthly windows. */
export interface CategoryUsage {
  daily: bigint;
  monthly: bigint;
}

/**
 * What the ledger says is already spent or reserved, summed since the instants of `windowStarts`.
 * `daily`…`total` and `payments_today` cover the spending categories (all but withdrawal);
 * `by_category` covers each category, withdrawal included. `recipient_known`: a completed payment
 * to this recipient exists.
 */
export interface Usage {
  daily: bigint;
  weekly: bigint;
  monthly: bigint;
  total: bigint;
  by_category: Record<Category, CategoryUsage>;
  payments_today: number;
  recipient_known: boolean;
  /** x402 spent or reserved today at the intent's host (counted only for an x402 intent). */
  x402_host_daily?: bigint;
  /**
   * For a host named by the agent: a completed purchase at that host already paid this payee,
   * one the service fetched itself or one the owner approved. Absent: not asked.
   */
  x402_payee_vouched?: boolean;
}

/** Nothing spent or reserved, every recipient known: the usage for checks that only look at the rules (and the base of test usages). */
export function emptyUsage(over: Partial<Usage> = {}): Usage {
  const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, { daily: 0n, monthly: 0n }])) as Usage['by_category'];
  return { daily: 0n, weekly: 0n, monthly: 0n, total: 0n, by_category: byCategory, payments_today: 0, recipient_known: true, ...over };
}

/** The status a new payment starts in (SPEC "States and transitions"). */
export type Outcome = 'pre_approved' | 'awaiting_approval' | 'rejected';

/** The result of `decide`: the outcome, the rule that decided (null when none), and why. */
export interface Decision {
  outcome: Outcome;
  rule: string | null;
  reason: string;
}

/** Start instants of the budget windows containing `now`. */
export interface WindowStarts {
  daily: Date;
  weekly: Date;
  monthly: Date;
}

export interface LocalTime {
  year: number;
  month: number;
  day: number;
  /** 0 = Monday … 6 = Sunday. */
  weekday: number;
  /** Minutes since local midnight. */
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const SHORT_DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/**
 * Since 1972 every zone's UTC offset has been a whole number of minutes (Liberia's, -0:44:30, was
 * the last that was not), so from 1973 on a local date and minute hold for a whole UTC minute.
 */
const WHOLE_MINUTE_OFFSETS_FROM = Date.UTC(1973, 0, 1);

/** The last local time computed per zone, by UTC minute: a payment asks for "now" two or three times, Intl's formatToParts is slow. */
const lastMinute = new Map<string, { minute: number; time: LocalTime }>();

/** The local date, weekday and minute of `at` (ms since epoch) in `timezone`. */
export function localTime(at: number, timezone: string): LocalTime {
  if (at < WHOLE_MINUTE_OFFSETS_FROM) return formatLocalTime(at, timezone);
  const minute = Math.floor(at / 60_000);
  const last = lastMinute.get(timezone);
  if (last?.minute === minute) return last.time;
  const time = Object.freeze(formatLocalTime(at, timezone));
  // Bounded by the zones the daemon is configured with (validated IANA names).
  lastMinute.set(timezone, { minute, time });
  return time;
}

function formatLocalTime(at: number, timezone: string): LocalTime {
  let fmt = formatters.get(timezone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(timezone, fmt);
  }
  const parts: Record<string, string> = {};
  for (const p of fmt.formatToParts(at)) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: SHORT_DAYS.indexOf(parts.weekday ?? ''),
    minute: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/**
 * The first instant whose local date in `timezone` is the civil date y-m-d (normally local
 * midnight; 01:00 where a DST gap skips midnight). Binary search to the second over ±15 h around
 * UTC midnight, which covers every UTC offset.
 */
const dayStarts = new Map<string, number>();

function startOfLocalDay(year: number, month: number, day: number, timezone: string): Date {
  // Memoised: a day starts at the same instant however often it is asked (pure, so safe to cache).
  const memoKey = `${timezone}|${year}|${month}|${day}`;
  const memo = dayStarts.get(memoKey);
  if (memo !== undefined) return new Date(memo);
  const start = searchStartOfLocalDay(year, month, day, timezone);
  if (dayStarts.size > 10_000) dayStarts.clear();
  dayStarts.set(memoKey, start.getTime());
  return start;
}

function searchStartOfLocalDay(year: number, month: number, day: number, timezone: string): Date {
  const civil = new Date(Date.UTC(year, month - 1, day));
  const key = civil.getUTCFullYear() * 10_000 + (civil.getUTCMonth() + 1) * 100 + civil.getUTCDate();
  const base = civil.getTime() / 1000;
  let lo = base - 15 * 3600; // local date before the target
  let hi = base + 15 * 3600; // local date on or after the target
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const l = localTime(mid * 1000, timezone);
    if (l.year * 10_000 + l.month * 100 + l.day >= key) hi = mid;
    else lo = mid;
  }
  return new Date(hi * 1000);
}

/**
 * Start instants of the day, the week (Monday) and the month containing `now` in the owner's
 * time zone (`active_hours.timezone`, else UTC). The DB layer sums usage since these instants.
 */
export function windowStarts(now: Date, timezone = 'UTC'): WindowStarts {
  const l = localTime(now.getTime(), timezone);
  return {
    daily: startOfLocalDay(l.year, l.month, l.day, timezone),
    weekly: startOfLocalDay(l.year, l.month, l.day - l.weekday, timezone),
    monthly: startOfLocalDay(l.year, l.month, 1, timezone),
  };
}

/** "HH:MM" → minutes since midnight. */
function minutesOf(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

/** Whether local `minute` of day `weekday` (0 = Monday) lies inside `hours`. */
export function isActiveAt(hours: ActiveHours, weekday: number, minute: number): boolean {
  const start = minutesOf(hours.start);
  const end = minutesOf(hours.end);
  const on = (d: number) => hours.days.includes(WEEKDAYS[(d + 7) % 7]!);
  if (start === end) return on(weekday);
  if (start < end) return on(weekday) && minute >= start && minute < end;
  return (on(weekday) && minute >= start) || (on(weekday - 1) && minute < end);
}

/** Whether an `x402_allowed_hosts` entry allows `host` (case-insensitive, trailing dot ignored). */
export function hostMatches(pattern: string, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (pattern.startsWith('*.')) return h.endsWith(pattern.slice(1)) && h.length > pattern.length - 1;
  return h === pattern;
}

/** Whether a recipient list entry (username or address) names the recipient. */
function recipientListed(list: string[], recipient: Intent['recipient']): boolean {
  const username = recipient.username?.toLowerCase();
  return list.some((entry) => entry === recipient.address || (username !== undefined && entry === username));
}

function recipientName(recipient: Intent['recipient']): string {
  return recipient.username ?? recipient.address;
}

const usdc = (micro: bigint) => `${formatUsdc(micro)} USDC`;

const WINDOW_WORDS = { daily: "today's", weekly: "this week's", monthly: "this month's", total: 'total' } as const;

const reject = (rule: string, reason: string): Decision => ({ outcome: 'rejected', rule, reason });

/** The first hard block that applies, or null. */
function hardBlock(rails: GuardRails, intent: Intent, now: Date): Decision | null {
  const spending = intent.category !== 'withdrawal';
  const who = recipientName(intent.recipient);
  if (rails.frozen) return reject('frozen', 'This wallet is frozen (by its owner, or by its agent with freeze); no payment can be made until the owner unfreezes it.');
  if (rails.valid_until && now.getTime() > rails.valid_until.getTime()) {
    return reject('valid_until', `The guard rails expired at ${rails.valid_until.toISOString()}; the owner must extend valid_until.`);
  }
  if (rails.blocked_recipients && recipientListed(rails.blocked_recipients, intent.recipient)) {
    return reject('blocked_recipients', `The owner has blocked payments to ${who}.`);
  }
  if (spending && rails.allowed_recipients && !recipientListed(rails.allowed_recipients, intent.recipient)) {
    return reject('allowed_recipients', `${who} is not in the owner's allowed_recipients list.`);
  }
  if (intent.category === 'x402' && rails.x402_allowed_hosts) {
    const host = intent.host;
    if (host === undefined || !rails.x402_allowed_hosts.some((p) => hostMatches(p, host))) {
      return reject('x402_allowed_hosts', `The host ${host ?? '(none)'} is not in the owner's x402_allowed_hosts list.`);
    }
  }
  const amount = usdc(intent.amount);
  if (spending && rails.max_per_payment !== undefined && intent.amount > rails.max_per_payment) {
    return reject('max_per_payment', `${amount} is above the maximum of ${usdc(rails.max_per_payment)} per payment.`);
  }
  const capMax = rails.category_caps?.[intent.category]?.max_per_payment;
  if (capMax !== undefined && intent.amount > capMax) {
    return reject(`category_caps.${intent.category}.max_per_payment`, `${amount} is above the maximum of ${usdc(capMax)} per ${intent.category} payment.`);
  }
  if (intent.category === 'x402' && rails.x402_max_per_request !== undefined && intent.amount > rails.x402_max_per_request) {
    return reject('x402_max_per_request', `${amount} is above the maximum of ${usdc(rails.x402_max_per_request)} per x402 request.`);
  }
  if (intent.category === 'withdrawal' && rails.withdrawal_allowlist && !rails.withdrawal_allowlist.includes(intent.recipient.address)) {
    return reject('withdrawal_allowlist', `${intent.recipient.address} is not in the owner's withdrawal_allowlist.`);
  }
  return null;
}

/** The first budget, count or category-window overrun, as [rule, reason], or null. */
function budgetOverrun(rails: GuardRails, intent: Intent, usage: Usage): [string, string] | null {
  const amount = usdc(intent.amount);
  const over = (limit: bigint | undefined, used: bigint) => limit !== undefined && used + intent.amount > limit;
  const sentence = (what: string, used: bigint, limit: bigint) =>
    `${amount} would bring ${what} to ${usdc(used + intent.amount)}, above the limit of ${usdc(limit)} (${usdc(used)} already used).`;
  if (intent.category !== 'withdrawal') {
    for (const w of ['daily', 'weekly', 'monthly', 'total'] as const) {
      const limit = rails.budgets?.[w];
      if (limit !== undefined && over(limit, usage[w])) return [`budgets.${w}`, sentence(`${WINDOW_WORDS[w]} spending`, usage[w], limit)];
    }
    const maxCount = rails.max_payments_per_day;
    if (maxCount !== undefined && usage.payments_today + 1 > maxCount) {
      return ['max_payments_per_day', `${usage.payments_today} payments were already made today; the limit is ${maxCount} per day.`];
    }
  }
  if (intent.category === 'x402' && rails.x402_daily_per_host !== undefined && over(rails.x402_daily_per_host, usage.x402_host_daily ?? 0n)) {
    const used = usage.x402_host_daily ?? 0n;
    // A host only the agent names counts its payee's spending under any name too (db/usage.ts).
    const where = intent.host_named_by_agent ? `at ${intent.host ?? '(no host)'} or to its payee ${intent.recipient.address}` : `at ${intent.host ?? '(no host)'}`;
    return ['x402_daily_per_host', sentence(`today's x402 spending ${where}`, used, rails.x402_daily_per_host)];
  }
  const cap = rails.category_caps?.[intent.category];
  for (const w of ['daily', 'monthly'] as const) {
    const limit = cap?.[w];
    const used = usage.by_category[intent.category][w];
    if (limit !== undefined && over(limit, used)) {
      return [`category_caps.${intent.category}.${w}`, sentence(`${WINDOW_WORDS[w]} ${intent.category} spending`, used, limit)];
    }
  }
  return null;
}

/** The first soft rule (needs the owner) that applies, as [rule, reason], or null. */
function softRule(rails: GuardRails, intent: Intent, usage: Usage, now: Date): [string, string] | null {
  if (rails.approval_above !== undefined && intent.amount > rails.approval_above) {
    return ['approval_above', `${usdc(intent.amount)} is above ${usdc(rails.approval_above)}, the amount the owner approves in person.`];
  }
  if (intent.category === 'x402' && intent.host_named_by_agent && rails.x402_allowed_hosts && usage.x402_payee_vouched === false && !rails.allowed_recipients) {
    return ['x402_allowed_hosts', `The host ${intent.host ?? '(none)'} is only the agent's word (a paid MCP tool's server is never contacted by this service), and ${intent.recipient.address} was never paid at it; the owner approves this payee.`];
  }
  if (rails.approve_new_recipients && !usage.recipient_known) {
    return ['approve_new_recipients', `This is the first payment to ${recipientName(intent.recipient)}; the owner approves new recipients.`];
  }
  const hours = rails.active_hours;
  if (hours) {
    const l = localTime(now.getTime(), hours.timezone);
    if (!isActiveAt(hours, l.weekday, l.minute)) {
      const when = hours.days.length > 0 ? `${hours.days.join(',')} ${hours.start}–${hours.end} (${hours.timezone})` : 'the active hours (none are set)';
      return ['active_hours', `Payments outside ${when} need the owner's approval.`];
    }
  }
  return null;
}

/**
 * Decides a payment intent. Order: hard blocks (frozen, valid_until, blocked and allowed
 * recipients, x402 hosts, per-payment maxima, withdrawal allowlist) → rejected; then budget
 * windows, the daily count and category windows → per `on_budget_exceeded`; then soft rules
 * (approval_above, approve_new_recipients, active_hours) → awaiting_approval; a withdrawal that
 * is not rejected → awaiting_approval (rule 'withdrawal'); otherwise pre_approved.
 */
export function decide(rails: GuardRails, intent: Intent, usage: Usage, now: Date): Decision {
  const blocked = hardBlock(rails, intent, now);
  if (blocked) return blocked;
  const overrun = budgetOverrun(rails, intent, usage);
  if (overrun) {
    const [rule, reason] = overrun;
    return rails.on_budget_exceeded === 'reject'
      ? { outcome: 'rejected', rule, reason }
      : { outcome: 'awaiting_approval', rule, reason: `${reason} The owner must approve it.` };
  }
  if (intent.category === 'withdrawal') {
    return { outcome: 'awaiting_approval', rule: 'withdrawal', reason: "Withdrawals to an external address always need the owner's approval." };
  }
  const soft = softRule(rails, intent, usage, now);
  if (soft) return { outcome: 'awaiting_approval', rule: soft[0], reason: soft[1] };
  return { outcome: 'pre_approved', rule: null, reason: 'Within every guard rail.' };
}

/** Remaining allowance per window and category; null where no limit is set. Never negative. */
export interface Remaining {
  daily: bigint | null;
  weekly: bigint | null;
  monthly: bigint | null;
  total: bigint | null;
  payments_today: number | null;
  by_category: Record<Category, { daily: bigint | null; monthly: bigint | null }>;
}

function left(limit: bigint | undefined, used: bigint): bigint | null {
  if (limit === undefined) return null;
  return limit > used ? limit - used : 0n;
}

/** What is left of each budget window, the daily count and each category cap (`my_limits`, `balance`, `can_i_afford`). */
export function remaining(rails: GuardRails, usage: Usage): Remaining {
  const b = rails.budgets;
  const byCategory = {} as Remaining['by_category'];
  for (const c of CATEGORIES) {
    const cap = rails.category_caps?.[c];
    byCategory[c] = { daily: left(cap?.daily, usage.by_category[c].daily), monthly: left(cap?.monthly, usage.by_category[c].monthly) };
  }
  return {
    daily: left(b?.daily, usage.daily),
    weekly: left(b?.weekly, usage.weekly),
    monthly: left(b?.monthly, usage.monthly),
    total: left(b?.total, usage.total),
    payments_today: rails.max_payments_per_day === undefined ? null : Math.max(0, rails.max_payments_per_day - usage.payments_today),
    by_category: byCategory,
  };
}
