import { describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { GuardRailsSchema, parseGuardRails, railsToJson } from '../../src/contract/guard-rails.ts';
import type { GuardRails } from '../../src/domain/guardrails.ts';

const ADDR = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';

const FULL = {
  max_per_payment: '25.5',
  approval_above: 10,
  budgets: { daily: '50', weekly: 200, monthly: '500.000001', total: '10000' },
  max_payments_per_day: 20,
  on_budget_exceeded: 'reject',
  category_caps: { x402: { max_per_payment: '0.05', daily: 2 }, withdrawal: { monthly: '1000' } },
  allowed_recipients: ['@Alice', 'bob', ADDR, 'alice'],
  blocked_recipients: ['mallory'],
  approve_new_recipients: true,
  x402_max_per_request: '0.1',
  x402_daily_per_host: '1.5',
  x402_allowed_hosts: ['API.Example.com', '*.weather.io'],
  active_hours: { timezone: 'asia/kolkata', days: ['fri', 'mon'], start: '22:00', end: '06:00' },
  valid_until: '2030-01-31T18:00:00+01:00',
  frozen: false,
  withdrawal_allowlist: [ADDR],
  loosen_delay_hours: 24,
};

describe('parseGuardRails', () => {
  test('an empty document is valid and restricts nothing', () => {
    expect(parseGuardRails({})).toEqual({ ok: true, rails: {} });
  });

  test('converts every field: micro-USDC, lower-case names, deduplicated lists, week-ordered days, canonical zone, UTC instant', () => {
    const r = parseGuardRails(FULL);
    expect(r).toEqual({
      ok: true,
      rails: {
        max_per_payment: 25_500_000n,
        approval_above: 10_000_000n,
        budgets: { daily: 50_000_000n, weekly: 200_000_000n, monthly: 500_000_001n, total: 10_000_000_000n },
        max_payments_per_day: 20,
        on_budget_exceeded: 'reject',
        category_caps: { x402: { max_per_payment: 50_000n, daily: 2_000_000n }, withdrawal: { monthly: 1_000_000_000n } },
        allowed_recipients: ['alice', 'bob', ADDR],
        blocked_recipients: ['mallory'],
        approve_new_recipients: true,
        x402_max_per_request: 100_000n,
        x402_daily_per_host: 1_500_000n,
        x402_allowed_hosts: ['api.example.com', '*.weather.io'],
        active_hours: { timezone: 'Asia/Kolkata', days: ['mon', 'fri'], start: '22:00', end: '06:00' },
        valid_until: new Date('2030-01-31T17:00:00Z'),
        frozen: false,
        withdrawal_allowlist: [ADDR],
        loosen_delay_hours: 24,
      } satisfies GuardRails,
    });
  });

  test('railsToJson gives decimal numbers, ISO UTC time, and parses back to the same rails', () => {
    const first = parseGuardRails(FULL);
    if (!first.ok) throw new Error('fixture must parse');
    const json = railsToJson(first.rails);
    expect(json.max_per_payment).toBe(25.5);
    expect(json.budgets?.monthly).toBe(500.000001);
    expect(json.valid_until).toBe('2030-01-31T17:00:00.000Z');
    expect(Value.Check(GuardRailsSchema, json)).toBe(true);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    expect(parseGuardRails(json)).toEqual(first);
  });

  test('railsToJson of no rails is an empty object', () => {
    expect(railsToJson({})).toEqual({});
  });

  test('active hours without days are valid (no active minute: every payment waits)', () => {
    const hours = { timezone: 'UTC', days: [], start: '00:00', end: '00:00' };
    expect(parseGuardRails({ active_hours: hours })).toEqual({ ok: true, rails: { active_hours: hours } });
  });

  test('zero limits are valid (they block or hold everything)', () => {
    expect(parseGuardRails({ max_per_payment: 0, budgets: { daily: '0' }, max_payments_per_day: 0, loosen_delay_hours: 0 })).toEqual({
      ok: true,
      rails: { max_per_payment: 0n, budgets: { daily: 0n }, max_payments_per_day: 0, loosen_delay_hours: 0 },
    });
  });

  // [input, path, message fragment]
  const errors: [string, unknown, string, string][] = [
    ['not an object', 5, '', 'guard rails: must be an object'],
    ['null', null, '', 'guard rails: must be an object'],
    ['unknown top-level field', { max_amount: 1 }, '/max_amount', 'max_amount: is not a guard-rails field'],
    ['unknown budget window', { budgets: { hourly: 1 } }, '/budgets/hourly', 'budgets.hourly: is not a guard-rails field'],
    ['unknown category', { category_caps: { gifts: { daily: 1 } } }, '/category_caps/gifts', 'category_caps.gifts: is not a guard-rails field'],
    ['amount of the wrong type', { max_per_payment: true }, '/max_per_payment', 'max_per_payment: must be a decimal number or string'],
    ['amount that is not a decimal', { approval_above: '12,5' }, '/approval_above', 'approval_above: "12,5" must be a plain decimal'],
    ['amount with 7 decimals', { budgets: { daily: '1.2345678' } }, '/budgets/daily', 'budgets.daily: "1.2345678" has more than 6 decimal places'],
    ['negative amount', { category_caps: { x402: { daily: -1 } } }, '/category_caps/x402/daily', 'category_caps.x402.daily: -1 must not be negative'],
    ['negative amount string', { x402_max_per_request: '-0.5' }, '/x402_max_per_request', 'x402_max_per_request: "-0.5" must not be negative'],
    ['unknown budget mode', { on_budget_exceeded: 'warn' }, '/on_budget_exceeded', 'on_budget_exceeded: must be one of "require_approval", "reject"'],
    ['fractional payment count', { max_payments_per_day: 1.5 }, '/max_payments_per_day', 'max_payments_per_day: must be a whole number'],
    ['negative delay', { loosen_delay_hours: -1 }, '/loosen_delay_hours', 'loosen_delay_hours: must be at least 0'],
    ['delay over 30 days', { loosen_delay_hours: 721 }, '/loosen_delay_hours', 'loosen_delay_hours: must be at most 720'],
    ['frozen as a string', { frozen: 'yes' }, '/frozen', 'frozen: must be true or false'],
    ['recipient that is neither name nor address', { allowed_recipients: ['bob', 'bad name!'] }, '/allowed_recipients/1', 'allowed_recipients[1]: "bad name!" is not a username or a Solana address'],
    ['blocked list too long', { blocked_recipients: Array.from({ length: 501 }, (_, i) => `u${i}`) }, '/blocked_recipients', 'blocked_recipients: has more than 500 entries'],
    ['host with a scheme', { x402_allowed_hosts: ['https://api.example.com'] }, '/x402_allowed_hosts/0', 'x402_allowed_hosts[0]: "https://api.example.com" is not a host name'],
    ['wildcard in the middle', { x402_allowed_hosts: ['a.*.com'] }, '/x402_allowed_hosts/0', 'x402_allowed_hosts[0]: "a.*.com" is not a host name'],
    ['withdrawal address not base58', { withdrawal_allowlist: ['0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl'] }, '/withdrawal_allowlist/0', 'withdrawal_allowlist[0]: "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl" is not a Solana address'],
    ['unknown time zone', { active_hours: { timezone: 'Mars/Olympus', days: ['mon'], start: '09:00', end: '17:00' } }, '/active_hours/timezone', 'active_hours.timezone: "Mars/Olympus" is not an IANA time zone'],
    ['offset instead of a zone', { active_hours: { timezone: '+05:30', days: ['mon'], start: '09:00', end: '17:00' } }, '/active_hours/timezone', 'active_hours.timezone: "+05:30" is not an IANA time zone'],
    ['time without leading zero', { active_hours: { timezone: 'UTC', days: ['mon'], start: '9:00', end: '17:00' } }, '/active_hours/start', 'active_hours.start: "9:00" is not a time as HH:MM'],
    ['24:00', { active_hours: { timezone: 'UTC', days: ['mon'], start: '09:00', end: '24:00' } }, '/active_hours/end', 'active_hours.end: "24:00" is not a time as HH:MM'],
    ['unknown day', { active_hours: { timezone: 'UTC', days: ['monday'], start: '09:00', end: '17:00' } }, '/active_hours/days/0', 'active_hours.days[0]: must be one of "mon"'],
    ['repeated day', { active_hours: { timezone: 'UTC', days: ['mon', 'mon'], start: '09:00', end: '17:00' } }, '/active_hours/days', 'active_hours.days: lists an entry twice'],
    ['missing end', { active_hours: { timezone: 'UTC', days: ['mon'], start: '09:00' } }, '/active_hours/end', 'active_hours.end: is required'],
    ['date without time', { valid_until: '2030-01-31' }, '/valid_until', 'valid_until: "2030-01-31" is not an ISO 8601 timestamp with a time zone'],
    ['time without zone', { valid_until: '2030-01-31T18:00:00' }, '/valid_until', 'valid_until: "2030-01-31T18:00:00" is not an ISO 8601 timestamp'],
    ['impossible date', { valid_until: '2030-02-30T00:00:00Z' }, '/valid_until', 'valid_until: "2030-02-30T00:00:00Z" is not a valid date and time'],
  ];
  test.each(errors)('rejects %s, naming the field', (_name, input, path, fragment) => {
    const r = parseGuardRails(input);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const hit = r.errors.find((e) => e.path === path);
    expect(hit?.message).toContain(fragment);
  });

  test('reports every broken field in one answer', () => {
    const r = parseGuardRails({ budgets: { hourly: 1 }, max_per_payment: 'x', on_budget_exceeded: 'warn', x402_allowed_hosts: ['a b'] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path).sort()).toEqual(['/budgets/hourly', '/max_per_payment', '/on_budget_exceeded', '/x402_allowed_hosts/0']);
  });
});
