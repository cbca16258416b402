/**
 * The owner-facing guard-rails document (DESIGN §5, §7): what `set_guard_rails` accepts and what
 * `get_guard_rails` / `my_limits` return. Money is a decimal number or string on input and a
 * decimal number on output; inside the process it is `bigint` micro-USDC (`GuardRails`).
 * Every field is optional; an absent field does not restrict. Unknown fields are refused.
 */
import { Type as T, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Amount } from './common.ts';
import { parseUsdc, toUsdcNumber } from '../domain/money.ts';
import { CATEGORIES, WEEKDAYS, type ActiveHours, type Category, type CategoryCap, type GuardRails } from '../domain/guardrails.ts';

/** Most entries a recipient, host or address list may hold. */
export const MAX_LIST_ENTRIES = 500;
/** Longest loosening delay: longer would lock the owner out of their own changes. */
export const MAX_LOOSEN_DELAY_HOURS = 720;
/**
 * The loosening delay of rails that do not set one: none (DESIGN §5, "`loosen_delay` (default none)").
 * The owner's pages and `set_guard_rails` describe it from this constant.
 */
export const DEFAULT_LOOSEN_DELAY_HOURS = 0;

const Opt = <S extends TSchema>(s: S) => T.Optional(s);
const Strict = { additionalProperties: false } as const;

const ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const Address = T.String({ pattern: ADDRESS.source, description: 'a Solana address (base58)' });

const RecipientList = T.Array(T.String({ minLength: 1, maxLength: 64 }), {
  maxItems: MAX_LIST_ENTRIES,
  description: 'usernames or Solana addresses; an empty list allows nobody',
});

const Clock = T.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'a time as HH:MM (24-hour), e.g. 09:30' });

const CategoryCapSchema = T.Object(
  { max_per_payment: Opt(Amount), daily: Opt(Amount), monthly: Opt(Amount) },
  { ...Strict, description: 'caps of one category: above max_per_payment → rejected; daily/monthly overruns follow on_budget_exceeded' },
);

/** The guard-rails document on the wire. */
export const GuardRailsSchema = T.Object(
  {
    max_per_payment: Opt(T.Union(Amount.anyOf, { description: 'a payment (amount + fee) above this is rejected' })),
    approval_above: Opt(T.Union(Amount.anyOf, { description: 'a payment (amount + fee) above this waits for the owner' })),
    budgets: Opt(
      T.Object(
        { daily: Opt(Amount), weekly: Opt(Amount), monthly: Opt(Amount), total: Opt(Amount) },
        { ...Strict, description: "spending windows in the owner's time zone (active_hours.timezone, else UTC); weeks start on Monday" },
      ),
    ),
    max_payments_per_day: Opt(T.Integer({ minimum: 0, maximum: 1_000_000, description: 'payments per day' })),
    on_budget_exceeded: Opt(
      T.Union([T.Literal('require_approval'), T.Literal('reject')], { description: 'what a budget or count overrun does; default require_approval' }),
    ),
    category_caps: Opt(T.Object(Object.fromEntries(CATEGORIES.map((c) => [c, Opt(CategoryCapSchema)])), Strict)),
    allowed_recipients: Opt(RecipientList),
    blocked_recipients: Opt(RecipientList),
    approve_new_recipients: Opt(T.Boolean({ description: 'the first payment to a recipient waits for the owner' })),
    x402_max_per_request: Opt(T.Union(Amount.anyOf, { description: 'an x402 purchase above this is rejected' })),
    x402_sign_in_disabled: Opt(T.Boolean({ description: 'never sign in (x402 sign-in-with-x) to reuse a purchase: pay again instead' })),
    x402_daily_per_host: Opt(
      T.Union(Amount.anyOf, { description: "x402 spending per host per day (the owner's day); a purchase that would pass it follows on_budget_exceeded" }),
    ),
    x402_allowed_hosts: Opt(
      T.Array(T.String({ minLength: 1, maxLength: 253 }), {
        maxItems: MAX_LIST_ENTRIES,
        description: 'host names x402 purchases may go to; *.example.com matches every subdomain',
      }),
    ),
    active_hours: Opt(
      T.Object(
        {
          timezone: T.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
          days: T.Array(T.Union(WEEKDAYS.map((d) => T.Literal(d))), { uniqueItems: true, description: 'days the hours apply to; none: every payment waits' }),
          start: Clock,
          end: Clock,
        },
        { ...Strict, description: 'outside these hours payments wait for the owner; end before start is an overnight range; start = end is the whole day' },
      ),
    ),
    valid_until: Opt(
      T.String({
        pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})$',
        description: 'an ISO 8601 timestamp with a time zone, e.g. 2030-01-31T18:00:00Z',
      }),
    ),
    frozen: Opt(T.Boolean({ description: 'kill switch: every payment and withdrawal is rejected' })),
    withdrawal_allowlist: Opt(T.Array(Address, { maxItems: MAX_LIST_ENTRIES, description: 'addresses withdrawals may go to' })),
    loosen_delay_hours: Opt(
      T.Number({ minimum: 0, maximum: MAX_LOOSEN_DELAY_HOURS, description: `hours before a loosening change applies; default ${DEFAULT_LOOSEN_DELAY_HOURS}` }),
    ),
  },
  { ...Strict, description: 'guard rails set by the owner; every field optional' },
);

/** The guard-rails document as JSON. */
export type GuardRailsJson = Static<typeof GuardRailsSchema>;

/** One problem with a guard-rails document: JSON pointer and a message naming the field. */
export interface GuardRailsError {
  path: string;
  message: string;
}

/** The result of `parseGuardRails`: the rails, or every problem found. */
export type ParseGuardRailsResult = { ok: true; rails: GuardRails } | { ok: false; errors: GuardRailsError[] };

const USERNAME = /^@?[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const HOST = new RegExp(`^(\\*\\.)?(${LABEL}\\.)*${LABEL}$`);
const TIMEZONE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** "/budgets/daily" → "budgets.daily"; "/allowed_recipients/3" → "allowed_recipients[3]". */
function fieldName(path: string): string {
  return path.split('/').slice(1).reduce((acc, seg) => (/^[0-9]+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '') || 'guard rails';
}

function structuralMessage(e: ValueError): string {
  const s = e.schema as { anyOf?: { const?: unknown; type?: string }[]; description?: string; maximum?: number; minimum?: number; maxItems?: number; maxLength?: number };
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not a guard-rails field';
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.Union: {
      const literals = s.anyOf?.filter((o) => o.const !== undefined).map((o) => JSON.stringify(o.const)) ?? [];
      if (literals.length > 0) return `must be one of ${literals.join(', ')}`;
      const reason = parseUsdc(e.value);
      return reason.ok ? 'must be a decimal amount' : reason.reason;
    }
    case ValueErrorType.Object:
      return 'must be an object';
    case ValueErrorType.Array:
      return 'must be an array';
    case ValueErrorType.Boolean:
      return 'must be true or false';
    case ValueErrorType.Integer:
      return 'must be a whole number';
    case ValueErrorType.Number:
      return 'must be a number';
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.ArrayMaxItems:
      return `has more than ${s.maxItems} entries`;
    case ValueErrorType.ArrayUniqueItems:
      return 'lists an entry twice';
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `must be at most ${s.maximum}`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `must be at least ${s.minimum}`;
    case ValueErrorType.StringMaxLength:
      return `is longer than ${s.maxLength} characters`;
    case ValueErrorType.StringMinLength:
      return 'must not be empty';
    case ValueErrorType.StringPattern:
      return `${JSON.stringify(e.value)} is not ${s.description ?? 'in the expected format'}`;
    default:
      return e.message.toLowerCase();
  }
}

/** Collects semantic errors while converting the structurally valid JSON to `GuardRails`. */
class Converter {
  readonly errors: GuardRailsError[] = [];

  fail(path: string, message: string): void {
    this.errors.push({ path, message: `${fieldName(path)}: ${message}` });
  }

  amount(path: string, value: number | string | undefined): bigint | undefined {
    if (value === undefined) return undefined;
    if (typeof value === 'number' ? value < 0 : value.startsWith('-')) {
      this.fail(path, `${JSON.stringify(value)} must not be negative`);
      return undefined;
    }
    const parsed = parseUsdc(value);
    if (parsed.ok) return parsed.micro;
    this.fail(path, `${JSON.stringify(value)} ${parsed.reason}`);
    return undefined;
  }

  list(path: string, values: string[] | undefined, normalize: (v: string) => string | null, what: string): string[] | undefined {
    if (values === undefined) return undefined;
    const out: string[] = [];
    values.forEach((v, i) => {
      const n = normalize(v);
      if (n === null) this.fail(`${path}/${i}`, `${JSON.stringify(v)} is not ${what}`);
      else if (!out.includes(n)) out.push(n);
    });
    return out;
  }

  timezone(path: string, tz: string): string {
    if (TIMEZONE.test(tz)) {
      try {
        return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
      } catch {
        // reported below
      }
    }
    this.fail(path, `${JSON.stringify(tz)} is not an IANA time zone such as Europe/Berlin or America/New_York`);
    return tz;
  }

  timestamp(path: string, iso: string | undefined): Date | undefined {
    if (iso === undefined) return undefined;
    const [y, m, d] = iso.slice(0, 10).split('-').map(Number) as [number, number, number];
    const civil = new Date(Date.UTC(y, m - 1, d));
    const ms = Date.parse(iso);
    if (civil.getUTCMonth() !== m - 1 || civil.getUTCDate() !== d || !Number.isFinite(ms)) {
      this.fail(path, `${JSON.stringify(iso)} is not a valid date and time`);
      return undefined;
    }
    return new Date(ms);
  }
}

function normalizeRecipient(v: string): string | null {
  if (ADDRESS.test(v)) return v;
  return USERNAME.test(v) ? v.replace(/^@/, '').toLowerCase() : null;
}

function normalizeHost(v: string): string | null {
  const h = v.toLowerCase().replace(/\.$/, '');
  return HOST.test(h) ? h : null;
}

/** Copies the defined values of `obj`, or undefined when none is defined. */
function compact<O extends object>(obj: O): O | undefined {
  const out = Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as O;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Validates a guard-rails document and converts it to `GuardRails`. Usernames and hosts become
 * lower-case, duplicates are dropped, days are put in week order, the time zone is canonical.
 * On failure every error names its field, e.g. `budgets.daily: "1.2345678" has more than 6 decimal places`.
 */
export function parseGuardRails(json: unknown): ParseGuardRailsResult {
  const seen = new Set<string>();
  const structural: GuardRailsError[] = [];
  for (const e of Value.Errors(GuardRailsSchema, json)) {
    if (seen.has(e.path)) continue;
    seen.add(e.path);
    structural.push({ path: e.path, message: `${fieldName(e.path)}: ${structuralMessage(e)}` });
  }
  if (structural.some((e) => e.path === '')) return { ok: false, errors: structural };

  // Fields with a structural error are skipped; the others are still checked so that one answer
  // lists every problem.
  const broken = new Set(structural.map((e) => e.path.split('/')[1]));
  const doc = Object.fromEntries(Object.entries(json as object).filter(([k]) => !broken.has(k))) as GuardRailsJson;
  const c = new Converter();
  c.errors.push(...structural);
  const rails: GuardRails = {};
  const assign = <K extends keyof GuardRails>(key: K, value: GuardRails[K] | undefined) => {
    if (value !== undefined) rails[key] = value;
  };
  assign('max_per_payment', c.amount('/max_per_payment', doc.max_per_payment));
  assign('approval_above', c.amount('/approval_above', doc.approval_above));
  if (doc.budgets) {
    const b = doc.budgets;
    assign(
      'budgets',
      compact({
        daily: c.amount('/budgets/daily', b.daily),
        weekly: c.amount('/budgets/weekly', b.weekly),
        monthly: c.amount('/budgets/monthly', b.monthly),
        total: c.amount('/budgets/total', b.total),
      }),
    );
  }
  assign('max_payments_per_day', doc.max_payments_per_day);
  assign('on_budget_exceeded', doc.on_budget_exceeded);
  if (doc.category_caps) {
    const caps: Partial<Record<Category, CategoryCap>> = {};
    for (const cat of CATEGORIES) {
      const cap = (doc.category_caps as Partial<Record<Category, Static<typeof CategoryCapSchema>>>)[cat];
      if (!cap) continue;
      const parsed = compact({
        max_per_payment: c.amount(`/category_caps/${cat}/max_per_payment`, cap.max_per_payment),
        daily: c.amount(`/category_caps/${cat}/daily`, cap.daily),
        monthly: c.amount(`/category_caps/${cat}/monthly`, cap.monthly),
      });
      if (parsed) caps[cat] = parsed;
    }
    assign('category_caps', compact(caps));
  }
  const recipient = 'a username or a Solana address';
  assign('allowed_recipients', c.list('/allowed_recipients', doc.allowed_recipients, normalizeRecipient, recipient));
  assign('blocked_recipients', c.list('/blocked_recipients', doc.blocked_recipients, normalizeRecipient, recipient));
  assign('approve_new_recipients', doc.approve_new_recipients);
  assign('x402_max_per_request', c.amount('/x402_max_per_request', doc.x402_max_per_request));
  assign('x402_daily_per_host', c.amount('/x402_daily_per_host', doc.x402_daily_per_host));
  assign('x402_sign_in_disabled', doc.x402_sign_in_disabled);
  assign('x402_allowed_hosts', c.list('/x402_allowed_hosts', doc.x402_allowed_hosts, normalizeHost, 'a host name such as api.example.com or *.example.com'));
  if (doc.active_hours) {
    const a = doc.active_hours;
    const hours: ActiveHours = {
      timezone: c.timezone('/active_hours/timezone', a.timezone),
      days: WEEKDAYS.filter((d) => a.days.includes(d)),
      start: a.start,
      end: a.end,
    };
    assign('active_hours', hours);
  }
  assign('valid_until', c.timestamp('/valid_until', doc.valid_until));
  assign('frozen', doc.frozen);
  assign('withdrawal_allowlist', doc.withdrawal_allowlist ? [...new Set(doc.withdrawal_allowlist)] : undefined);
  assign('loosen_delay_hours', doc.loosen_delay_hours);
  return c.errors.length > 0 ? { ok: false, errors: c.errors } : { ok: true, rails };
}

const num = (micro: bigint | undefined) => (micro === undefined ? undefined : toUsdcNumber(micro));

/** The JSON form of `rails` for responses: amounts as decimal numbers, `valid_until` as ISO 8601 UTC. */
export function railsToJson(rails: GuardRails): GuardRailsJson {
  const caps: Record<string, object> = {};
  for (const cat of CATEGORIES) {
    const cap = rails.category_caps?.[cat];
    const json = cap && compact({ max_per_payment: num(cap.max_per_payment), daily: num(cap.daily), monthly: num(cap.monthly) });
    if (json) caps[cat] = json;
  }
  const b = rails.budgets;
  return (
    compact({
      max_per_payment: num(rails.max_per_payment),
      approval_above: num(rails.approval_above),
      budgets: b && compact({ daily: num(b.daily), weekly: num(b.weekly), monthly: num(b.monthly), total: num(b.total) }),
      max_payments_per_day: rails.max_payments_per_day,
      on_budget_exceeded: rails.on_budget_exceeded,
      category_caps: compact(caps),
      allowed_recipients: rails.allowed_recipients && [...rails.allowed_recipients],
      blocked_recipients: rails.blocked_recipients && [...rails.blocked_recipients],
      approve_new_recipients: rails.approve_new_recipients,
      x402_max_per_request: num(rails.x402_max_per_request),
      x402_daily_per_host: num(rails.x402_daily_per_host),
      x402_sign_in_disabled: rails.x402_sign_in_disabled,
      x402_allowed_hosts: rails.x402_allowed_hosts && [...rails.x402_allowed_hosts],
      active_hours: rails.active_hours && { ...rails.active_hours, days: [...rails.active_hours.days] },
      valid_until: rails.valid_until?.toISOString(),
      frozen: rails.frozen,
      withdrawal_allowlist: rails.withdrawal_allowlist && [...rails.withdrawal_allowlist],
      loosen_delay_hours: rails.loosen_delay_hours,
    }) ?? {}
  );
}
