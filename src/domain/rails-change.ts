/**
 * Delayed loosening (DESIGN §5): a change of guard rails that restricts applies at once; a change
 * that loosens applies only after the owner's `loosen_delay_hours`, so a stolen owner session
 * cannot open the wallet instantly.
 *
 * `set_guard_rails` takes the whole desired document `next`. With `current` the rails in force:
 *   const { tightening, loosening } = classifyChange(current, next);
 *   store tightening as the rails in force now;
 *   pending = loosening && { rails: loosening, apply_at: now + current.loosen_delay_hours (default 0) };
 * replacing any earlier pending change (the newest document is the owner's whole intent).
 *
 * Per-field rule: `tightening` holds, field by field, `next`'s value when it is at least as strict
 * as `current`'s, else the strictest value both allow ("meet"); `loosening` is `next` itself when
 * any field of `next` is looser than `current`, else null. Strictness of each field:
 * - upper limits (max_per_payment, approval_above, budgets.*, max_payments_per_day,
 *   category_caps.*.*, x402_max_per_request, x402_daily_per_host, valid_until): lower or earlier is stricter; absent is
 *   unlimited; meet = the smaller;
 * - frozen, approve_new_recipients, x402_sign_in_disabled: true is stricter; absent is false; meet = or;
 * - on_budget_exceeded: reject is stricter than require_approval (the default);
 * - loosen_delay_hours: longer is stricter; absent is 0; meet = the longer;
 * - allowlists (allowed_recipients, withdrawal_allowlist, x402_allowed_hosts): absent allows
 *   everything; an entry of next not allowed by current loosens; meet = the entries one list holds
 *   that the other allows (hosts compare by wildcard, recipients and addresses by equality);
 * - blocked_recipients: an entry removed loosens; meet = the union;
 * - active_hours: absent is "always" (in UTC, the zone of the budget windows); next is stricter when
 *   it allows no minute of the week that current does not, in the same time zone; meet = the common
 *   minutes when one {days, start, end} expresses them, else no active minute (every payment waits
 *   for the owner). A change of time zone also moves the budget windows, so it always waits, with
 *   no active minute in the old zone until then.
 */
import { hostMatches, isActiveAt, CATEGORIES, WEEKDAYS, type ActiveHours, type Category, type CategoryCap, type GuardRails } from './guardrails.ts';

/** A loosening waiting for its time. */
export interface PendingRails {
  rails: GuardRails;
  apply_at: Date;
}

/** The split of a change: what applies now, and the document to switch to later (or null). */
export interface RailsChange {
  tightening: GuardRails;
  loosening: GuardRails | null;
}

/** One field's verdict: the value in force now, and whether next loosens it. */
interface FieldChange<V> {
  now: V | undefined;
  loosens: boolean;
}

const settle = <V>(next: V | undefined, meet: V | undefined, loosens: boolean): FieldChange<V> => ({ now: loosens ? meet : next, loosens });

/** Upper limit: absent = unlimited; lower is stricter. */
function limit<V extends bigint | number>(old: V | undefined, next: V | undefined): FieldChange<V> {
  const loosens = old !== undefined && (next === undefined || next > old);
  return settle(next, old, loosens);
}

function deadline(old: Date | undefined, next: Date | undefined): FieldChange<Date> {
  const loosens = old !== undefined && (next === undefined || next.getTime() > old.getTime());
  return settle(next, old, loosens);
}

/** Flag where true is stricter: absent = false. */
function flag(old: boolean | undefined, next: boolean | undefined): FieldChange<boolean> {
  return settle(next, true, old === true && next !== true);
}

function onExceeded(old: GuardRails['on_budget_exceeded'], next: GuardRails['on_budget_exceeded']): FieldChange<'require_approval' | 'reject'> {
  return settle(next, 'reject', old === 'reject' && next !== 'reject');
}

function delay(old: number | undefined, next: number | undefined): FieldChange<number> {
  return settle(next, old, (next ?? 0) < (old ?? 0));
}

/** Allowlist where `covers(list, entry)` tells whether the list allows everything the entry allows. */
function allowlist(old: string[] | undefined, next: string[] | undefined, covers: (list: string[], entry: string) => boolean): FieldChange<string[]> {
  if (old === undefined) return { now: next, loosens: false };
  if (next === undefined) return { now: old, loosens: true };
  const fromNext = next.filter((e) => covers(old, e));
  const meet = [...fromNext, ...old.filter((e) => covers(next, e) && !covers(fromNext, e))];
  return settle(next, meet, fromNext.length < next.length);
}

const equalCovers = (list: string[], entry: string) => list.includes(entry);

/** A host pattern list covers `entry` when it allows every host the entry allows. */
function hostCovers(list: string[], entry: string): boolean {
  return list.some((p) => p === entry || (p.startsWith('*.') && hostMatches(p, entry.replace(/^\*\./, 'x.'))));
}

function blocklist(old: string[] | undefined, next: string[] | undefined): FieldChange<string[]> {
  const removed = (old ?? []).filter((e) => !(next ?? []).includes(e));
  return settle(next, [...(next ?? []), ...removed], removed.length > 0);
}

/** Every minute of the week (Monday 00:00 = 0) that `hours` allows. */
function weekMinutes(hours: ActiveHours): boolean[] {
  return Array.from({ length: WEEKDAYS.length * 1440 }, (_, i) => isActiveAt(hours, Math.floor(i / 1440), i % 1440));
}

const sameMinutes = (a: boolean[], b: boolean[]) => a.every((on, i) => on === b[i]);

/**
 * Same time zone: next applies now when it allows no minute that old does not; otherwise the
 * intersection applies now when one {days, start, end} expresses it, else no active minute at all
 * (every payment waits for the owner) until next applies. Another time zone also moves the budget
 * windows: the change waits, and until then no minute is active, in the old zone.
 */
function activeHours(old: ActiveHours | undefined, next: ActiveHours | undefined): FieldChange<ActiveHours> {
  const oldZone = old?.timezone ?? 'UTC';
  if (next === undefined) return { now: old, loosens: old !== undefined };
  const never: ActiveHours = { timezone: oldZone, days: [], start: '00:00', end: '00:00' };
  if (next.timezone !== oldZone) return { now: never, loosens: true };
  if (old === undefined) return { now: next, loosens: false };
  const after = weekMinutes(next);
  const before = weekMinutes(old);
  if (after.every((on, i) => !on || before[i])) return { now: next, loosens: false };
  const both = after.map((on, i) => on && before[i] === true);
  const common = WEEKDAYS.filter((d) => old.days.includes(d) && next.days.includes(d));
  for (const days of [common, old.days, next.days])
    for (const start of [old.start, next.start])
      for (const end of [old.end, next.end]) {
        const candidate: ActiveHours = { timezone: oldZone, days: [...days], start, end };
        if (sameMinutes(weekMinutes(candidate), both)) return { now: candidate, loosens: true };
      }
  return { now: never, loosens: true };
}

/** Applies `rule` to each key of a group of limits (budgets, one category's caps). */
function group<G extends object>(old: G | undefined, next: G | undefined, keys: readonly (keyof G)[], rule: (o: G[keyof G] | undefined, n: G[keyof G] | undefined) => FieldChange<G[keyof G]>): FieldChange<G> {
  let loosens = false;
  const meet: Partial<G> = {};
  for (const k of keys) {
    const c = rule(old?.[k], next?.[k]);
    loosens ||= c.loosens;
    if (c.now !== undefined) meet[k] = c.now;
  }
  return settle(next, Object.keys(meet).length > 0 ? (meet as G) : undefined, loosens);
}

const CAP_KEYS = ['max_per_payment', 'daily', 'monthly'] as const;
const BUDGET_KEYS = ['daily', 'weekly', 'monthly', 'total'] as const;

function categoryCaps(old: GuardRails['category_caps'], next: GuardRails['category_caps']): FieldChange<Partial<Record<Category, CategoryCap>>> {
  return group(old, next, CATEGORIES, (o, n) => group<CategoryCap>(o, n, CAP_KEYS, limit));
}

/**
 * Splits the change from `old` to `next` into what applies now (`tightening`, a whole document)
 * and the document to switch to after the delay (`loosening` = `next`, or null when `next`
 * loosens nothing; then `tightening` equals `next`). See the module comment for the per-field rule.
 */
export function classifyChange(old: GuardRails, next: GuardRails): RailsChange {
  const fields: { [K in keyof Required<GuardRails>]: FieldChange<GuardRails[K]> } = {
    max_per_payment: limit(old.max_per_payment, next.max_per_payment),
    approval_above: limit(old.approval_above, next.approval_above),
    budgets: group(old.budgets, next.budgets, BUDGET_KEYS, limit),
    max_payments_per_day: limit(old.max_payments_per_day, next.max_payments_per_day),
    on_budget_exceeded: onExceeded(old.on_budget_exceeded, next.on_budget_exceeded),
    category_caps: categoryCaps(old.category_caps, next.category_caps),
    allowed_recipients: allowlist(old.allowed_recipients, next.allowed_recipients, equalCovers),
    blocked_recipients: blocklist(old.blocked_recipients, next.blocked_recipients),
    approve_new_recipients: flag(old.approve_new_recipients, next.approve_new_recipients),
    x402_max_per_request: limit(old.x402_max_per_request, next.x402_max_per_request),
    x402_daily_per_host: limit(old.x402_daily_per_host, next.x402_daily_per_host),
    x402_sign_in_disabled: flag(old.x402_sign_in_disabled, next.x402_sign_in_disabled),
    x402_allowed_hosts: allowlist(old.x402_allowed_hosts, next.x402_allowed_hosts, hostCovers),
    active_hours: activeHours(old.active_hours, next.active_hours),
    valid_until: deadline(old.valid_until, next.valid_until),
    frozen: flag(old.frozen, next.frozen),
    withdrawal_allowlist: allowlist(old.withdrawal_allowlist, next.withdrawal_allowlist, equalCovers),
    loosen_delay_hours: delay(old.loosen_delay_hours, next.loosen_delay_hours),
  };
  const tightening: Record<string, unknown> = {};
  let loosens = false;
  for (const [key, change] of Object.entries(fields) as [keyof GuardRails, FieldChange<unknown>][]) {
    if (change.now !== undefined) tightening[key] = change.now;
    loosens ||= change.loosens;
  }
  return { tightening: tightening as GuardRails, loosening: loosens ? next : null };
}

/** The rails in force at `now`: the pending document once `now` reaches its `apply_at`, else `current`. */
export function effectiveRails(current: GuardRails, pending: PendingRails | null, now: Date): GuardRails {
  return pending !== null && now.getTime() >= pending.apply_at.getTime() ? pending.rails : current;
}
