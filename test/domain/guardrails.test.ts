import { describe, expect, test } from 'bun:test';
import {
  CATEGORIES,
  decide,
  emptyUsage,
  hostMatches,
  isActiveAt,
  localTime,
  remaining,
  windowStarts,
  type ActiveHours,
  type Category,
  type Decision,
  type GuardRails,
  type Intent,
  type Usage,
} from '../../src/domain/guardrails.ts';
import { parseUsdc } from '../../src/domain/money.ts';

/** Micro-USDC from a decimal string. */
function u(s: string): bigint {
  const r = parseUsdc(s);
  if (!r.ok) throw new Error(`bad amount ${s}`);
  return r.micro;
}

const ALICE = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const BOB = 'BobBobBobBobBobBobBobBobBobBobBobBobBobBobB1';
const NOW = new Date('2024-06-05T12:00:00Z'); // a Wednesday

const usage = emptyUsage;

function usageIn(category: Category, daily: bigint, monthly: bigint): Usage {
  const base = usage();
  base.by_category[category] = { daily, monthly };
  return base;
}

function intent(over: Partial<Intent> = {}): Intent {
  return { category: 'wallet', amount: u('10'), recipient: { username: 'alice', address: ALICE }, ...over };
}

const pick = (d: Decision) => [d.outcome, d.rule];

describe('decide', () => {
  test('no rails pre-approves every spending category and holds every withdrawal', () => {
    for (const category of CATEGORIES) {
      const d = decide({}, intent({ category, host: 'api.example.com' }), usage({ recipient_known: false }), NOW);
      expect(pick(d)).toEqual(category === 'withdrawal' ? ['awaiting_approval', 'withdrawal'] : ['pre_approved', null]);
    }
  });

  // [name, rails, intent, usage, now, outcome, rule]
  type Case = [string, GuardRails, Partial<Intent>, Partial<Usage>, Date, Decision['outcome'], string | null];
  const cases: Case[] = [
    // frozen
    ['frozen rejects a payment', { frozen: true }, {}, {}, NOW, 'rejected', 'frozen'],
    ['frozen rejects a withdrawal', { frozen: true }, { category: 'withdrawal' }, {}, NOW, 'rejected', 'frozen'],
    ['frozen false changes nothing', { frozen: false }, {}, {}, NOW, 'pre_approved', null],
    ['frozen wins over every other rule', { frozen: true, max_per_payment: 0n, blocked_recipients: ['alice'] }, {}, {}, NOW, 'rejected', 'frozen'],
    // valid_until
    ['valid_until exactly now still passes', { valid_until: NOW }, {}, {}, NOW, 'pre_approved', null],
    ['valid_until one millisecond ago rejects', { valid_until: new Date(NOW.getTime() - 1) }, {}, {}, NOW, 'rejected', 'valid_until'],
    ['valid_until in the future passes', { valid_until: new Date('2030-01-01T00:00:00Z') }, {}, {}, NOW, 'pre_approved', null],
    ['valid_until passed rejects a withdrawal', { valid_until: new Date(0) }, { category: 'withdrawal' }, {}, NOW, 'rejected', 'valid_until'],
    // blocked_recipients
    ['blocked username rejects', { blocked_recipients: ['alice'] }, {}, {}, NOW, 'rejected', 'blocked_recipients'],
    ['blocked username matches case-insensitively', { blocked_recipients: ['alice'] }, { recipient: { username: 'Alice', address: ALICE } }, {}, NOW, 'rejected', 'blocked_recipients'],
    ['blocked address rejects', { blocked_recipients: [ALICE] }, {}, {}, NOW, 'rejected', 'blocked_recipients'],
    ['blocked address rejects a withdrawal', { blocked_recipients: [ALICE] }, { category: 'withdrawal', recipient: { address: ALICE } }, {}, NOW, 'rejected', 'blocked_recipients'],
    ['another blocked recipient does not matter', { blocked_recipients: ['bob', BOB] }, {}, {}, NOW, 'pre_approved', null],
    // allowed_recipients
    ['allowed by username passes', { allowed_recipients: ['alice'] }, {}, {}, NOW, 'pre_approved', null],
    ['allowed by address passes', { allowed_recipients: [ALICE] }, {}, {}, NOW, 'pre_approved', null],
    ['not allowed rejects', { allowed_recipients: ['bob', BOB] }, {}, {}, NOW, 'rejected', 'allowed_recipients'],
    ['an empty allowlist allows nobody', { allowed_recipients: [] }, {}, {}, NOW, 'rejected', 'allowed_recipients'],
    ['allowed_recipients also binds x402 pay-to addresses', { allowed_recipients: ['bob'] }, { category: 'x402', host: 'a.com', recipient: { address: ALICE } }, {}, NOW, 'rejected', 'allowed_recipients'],
    ['allowed_recipients does not bind withdrawals', { allowed_recipients: ['bob'] }, { category: 'withdrawal', recipient: { address: ALICE } }, {}, NOW, 'awaiting_approval', 'withdrawal'],
    ['blocked wins over allowed', { allowed_recipients: ['alice'], blocked_recipients: [ALICE] }, {}, {}, NOW, 'rejected', 'blocked_recipients'],
    // x402 hosts
    ['x402 exact host passes', { x402_allowed_hosts: ['api.example.com'] }, { category: 'x402', host: 'api.example.com' }, {}, NOW, 'pre_approved', null],
    ['x402 host is compared case-insensitively without trailing dot', { x402_allowed_hosts: ['api.example.com'] }, { category: 'x402', host: 'API.Example.com.' }, {}, NOW, 'pre_approved', null],
    ['x402 wildcard matches a subdomain', { x402_allowed_hosts: ['*.example.com'] }, { category: 'x402', host: 'api.example.com' }, {}, NOW, 'pre_approved', null],
    ['x402 wildcard matches a deeper subdomain', { x402_allowed_hosts: ['*.example.com'] }, { category: 'x402', host: 'a.b.example.com' }, {}, NOW, 'pre_approved', null],
    ['x402 wildcard does not match the apex', { x402_allowed_hosts: ['*.example.com'] }, { category: 'x402', host: 'example.com' }, {}, NOW, 'rejected', 'x402_allowed_hosts'],
    ['x402 wildcard does not match a look-alike suffix', { x402_allowed_hosts: ['*.example.com'] }, { category: 'x402', host: 'evilexample.com' }, {}, NOW, 'rejected', 'x402_allowed_hosts'],
    ['x402 other host rejects', { x402_allowed_hosts: ['api.example.com'] }, { category: 'x402', host: 'api.example.org' }, {}, NOW, 'rejected', 'x402_allowed_hosts'],
    ['x402 without a host rejects when hosts are listed', { x402_allowed_hosts: ['api.example.com'] }, { category: 'x402' }, {}, NOW, 'rejected', 'x402_allowed_hosts'],
    ['x402_allowed_hosts does not bind wallet payments', { x402_allowed_hosts: [] }, {}, {}, NOW, 'pre_approved', null],
    // x402 hosts only the agent names (a paid MCP tool's server): the payee needs the owner's word until vouched for
    ['x402 named host: a payee never paid there waits for the owner', { x402_allowed_hosts: ['mcp.example.com'] }, { category: 'x402', host: 'mcp.example.com', host_named_by_agent: true }, { x402_payee_vouched: false }, NOW, 'awaiting_approval', 'x402_allowed_hosts'],
    ['x402 named host: a vouched payee passes', { x402_allowed_hosts: ['mcp.example.com'] }, { category: 'x402', host: 'mcp.example.com', host_named_by_agent: true }, { x402_payee_vouched: true }, NOW, 'pre_approved', null],
    ['x402 named host: a payee in allowed_recipients passes', { x402_allowed_hosts: ['mcp.example.com'], allowed_recipients: [ALICE] }, { category: 'x402', host: 'mcp.example.com', host_named_by_agent: true }, { x402_payee_vouched: false }, NOW, 'pre_approved', null],
    ['x402 named host outside the list still rejects', { x402_allowed_hosts: ['mcp.example.com'] }, { category: 'x402', host: 'evil.example.org', host_named_by_agent: true }, { x402_payee_vouched: true }, NOW, 'rejected', 'x402_allowed_hosts'],
    ['x402 named host without x402_allowed_hosts needs no vouch', {}, { category: 'x402', host: 'mcp.example.com', host_named_by_agent: true }, { x402_payee_vouched: false }, NOW, 'pre_approved', null],
    ['x402 fetched host needs no vouch', { x402_allowed_hosts: ['api.example.com'] }, { category: 'x402', host: 'api.example.com' }, { x402_payee_vouched: false }, NOW, 'pre_approved', null],
    // per-payment maxima
    ['max_per_payment exactly at the limit passes', { max_per_payment: u('10') }, {}, {}, NOW, 'pre_approved', null],
    ['max_per_payment one micro-unit above rejects', { max_per_payment: u('9.999999') }, {}, {}, NOW, 'rejected', 'max_per_payment'],
    ['max_per_payment does not bind withdrawals', { max_per_payment: u('1') }, { category: 'withdrawal' }, {}, NOW, 'awaiting_approval', 'withdrawal'],
    ['max_per_payment rejects even when on_budget_exceeded is require_approval', { max_per_payment: u('1'), on_budget_exceeded: 'require_approval' }, {}, {}, NOW, 'rejected', 'max_per_payment'],
    ['x402_max_per_request exactly at the limit passes', { x402_max_per_request: u('10') }, { category: 'x402', host: 'a.com' }, {}, NOW, 'pre_approved', null],
    ['x402_max_per_request one micro-unit above rejects', { x402_max_per_request: u('9.999999') }, { category: 'x402', host: 'a.com' }, {}, NOW, 'rejected', 'x402_max_per_request'],
    ['x402_max_per_request does not bind wallet payments', { x402_max_per_request: u('1') }, {}, {}, NOW, 'pre_approved', null],
    // x402 per host per day
    ['x402_daily_per_host: reaching it exactly passes', { x402_daily_per_host: u('15') }, { category: 'x402', host: 'a.com' }, { x402_host_daily: u('5') }, NOW, 'pre_approved', null],
    ['x402_daily_per_host: one micro-unit over waits for the owner', { x402_daily_per_host: u('15') }, { category: 'x402', host: 'a.com' }, { x402_host_daily: u('5.000001') }, NOW, 'awaiting_approval', 'x402_daily_per_host'],
    ['x402_daily_per_host: over in reject mode rejects', { x402_daily_per_host: u('15'), on_budget_exceeded: 'reject' }, { category: 'x402', host: 'a.com' }, { x402_host_daily: u('6') }, NOW, 'rejected', 'x402_daily_per_host'],
    ['x402_daily_per_host does not bind wallet payments', { x402_daily_per_host: 0n, on_budget_exceeded: 'reject' }, {}, {}, NOW, 'pre_approved', null],
    // withdrawals
    ['withdrawal to an allowlisted address waits for the owner', { withdrawal_allowlist: [ALICE] }, { category: 'withdrawal', recipient: { address: ALICE } }, {}, NOW, 'awaiting_approval', 'withdrawal'],
    ['withdrawal outside the allowlist rejects', { withdrawal_allowlist: [BOB] }, { category: 'withdrawal', recipient: { address: ALICE } }, {}, NOW, 'rejected', 'withdrawal_allowlist'],
    ['withdrawal_allowlist does not bind payments', { withdrawal_allowlist: [BOB] }, {}, {}, NOW, 'pre_approved', null],
    ['withdrawals ignore the spending budgets', { budgets: { daily: 0n, total: 0n }, max_payments_per_day: 0, on_budget_exceeded: 'reject' }, { category: 'withdrawal' }, { daily: u('100'), total: u('100'), payments_today: 9 }, NOW, 'awaiting_approval', 'withdrawal'],
    ['withdrawals ignore approval_above and new recipients', { approval_above: 0n, approve_new_recipients: true }, { category: 'withdrawal' }, { recipient_known: false }, NOW, 'awaiting_approval', 'withdrawal'],
    // count
    ['max_payments_per_day: the last allowed payment passes', { max_payments_per_day: 5 }, {}, { payments_today: 4 }, NOW, 'pre_approved', null],
    ['max_payments_per_day: one more waits for the owner', { max_payments_per_day: 5 }, {}, { payments_today: 5 }, NOW, 'awaiting_approval', 'max_payments_per_day'],
    ['max_payments_per_day: one more rejects in reject mode', { max_payments_per_day: 5, on_budget_exceeded: 'reject' }, {}, { payments_today: 5 }, NOW, 'rejected', 'max_payments_per_day'],
    ['max_payments_per_day 0 holds every payment', { max_payments_per_day: 0 }, {}, {}, NOW, 'awaiting_approval', 'max_payments_per_day'],
    // soft rules
    ['approval_above exactly at the limit passes', { approval_above: u('10') }, {}, {}, NOW, 'pre_approved', null],
    ['approval_above one micro-unit above waits', { approval_above: u('9.999999') }, {}, {}, NOW, 'awaiting_approval', 'approval_above'],
    ['approval_above applies to x402', { approval_above: u('1') }, { category: 'x402', host: 'a.com' }, {}, NOW, 'awaiting_approval', 'approval_above'],
    ['approve_new_recipients holds a first payment', { approve_new_recipients: true }, {}, { recipient_known: false }, NOW, 'awaiting_approval', 'approve_new_recipients'],
    ['approve_new_recipients passes a known recipient', { approve_new_recipients: true }, {}, { recipient_known: true }, NOW, 'pre_approved', null],
    ['approve_new_recipients false ignores new recipients', { approve_new_recipients: false }, {}, { recipient_known: false }, NOW, 'pre_approved', null],
    // precedence
    ['a hard block wins over a budget overrun', { max_per_payment: u('1'), budgets: { daily: 0n } }, {}, {}, NOW, 'rejected', 'max_per_payment'],
    ['a budget overrun wins over approval_above', { approval_above: 0n, budgets: { daily: 0n }, on_budget_exceeded: 'reject' }, {}, {}, NOW, 'rejected', 'budgets.daily'],
    ['approval_above is reported before a new recipient', { approval_above: 0n, approve_new_recipients: true }, {}, { recipient_known: false }, NOW, 'awaiting_approval', 'approval_above'],
  ];

  test.each(cases)('%s', (_name, rails, i, us, now, outcome, rule) => {
    const d = decide(rails, intent(i), usage(us), now);
    expect(pick(d)).toEqual([outcome, rule]);
    expect(d.reason.length).toBeGreaterThan(0);
  });

  describe.each(['daily', 'weekly', 'monthly', 'total'] as const)('budgets.%s', (w) => {
    const rails = (mode?: 'reject' | 'require_approval'): GuardRails => ({ budgets: { [w]: u('50') }, on_budget_exceeded: mode });
    const used = usage({ [w]: u('40') });
    test('a payment that reaches the budget exactly passes', () => {
      expect(pick(decide(rails(), intent({ amount: u('10') }), used, NOW))).toEqual(['pre_approved', null]);
    });
    test.each([
      [undefined, 'awaiting_approval'],
      ['require_approval', 'awaiting_approval'],
      ['reject', 'rejected'],
    ] as const)('one micro-unit over follows on_budget_exceeded=%s', (mode, outcome) => {
      const d = decide(rails(mode), intent({ amount: u('10.000001') }), used, NOW);
      expect(pick(d)).toEqual([outcome, `budgets.${w}`]);
      expect(d.reason).toContain('10.000001 USDC');
      expect(d.reason).toContain('50.000001 USDC');
      expect(d.reason).toContain('50 USDC');
      expect(d.reason).toContain('40 USDC already used');
    });
    test('other windows do not count against it', () => {
      const others = usage({ daily: u('999'), weekly: u('999'), monthly: u('999'), total: u('999'), [w]: 0n });
      expect(pick(decide(rails('reject'), intent({ amount: u('50') }), others, NOW))).toEqual(['pre_approved', null]);
    });
  });

  describe.each(CATEGORIES)('category_caps.%s', (category) => {
    const base: Partial<Intent> = { category, host: 'api.example.com' };
    const passOutcome = category === 'withdrawal' ? ['awaiting_approval', 'withdrawal'] : ['pre_approved', null];
    test('max_per_payment exactly at the cap passes', () => {
      const rails: GuardRails = { category_caps: { [category]: { max_per_payment: u('10') } } };
      expect(pick(decide(rails, intent(base), usage(), NOW))).toEqual(passOutcome);
    });
    test('max_per_payment one micro-unit above rejects', () => {
      const rails: GuardRails = { category_caps: { [category]: { max_per_payment: u('9.999999') } } };
      const d = decide(rails, intent(base), usage(), NOW);
      expect(pick(d)).toEqual(['rejected', `category_caps.${category}.max_per_payment`]);
      expect(d.reason).toContain('9.999999 USDC');
    });
    test.each(['daily', 'monthly'] as const)('%s cap: exactly at passes, one micro-unit over follows on_budget_exceeded', (w) => {
      const cap = { [w]: u('25') };
      const used = usageIn(category, w === 'daily' ? u('15') : 0n, w === 'monthly' ? u('15') : 0n);
      expect(pick(decide({ category_caps: { [category]: cap } }, intent(base), used, NOW))).toEqual(passOutcome);
      const over = intent({ ...base, amount: u('10.000001') });
      expect(pick(decide({ category_caps: { [category]: cap } }, over, used, NOW))).toEqual(['awaiting_approval', `category_caps.${category}.${w}`]);
      expect(pick(decide({ category_caps: { [category]: cap }, on_budget_exceeded: 'reject' }, over, used, NOW))).toEqual([
        'rejected',
        `category_caps.${category}.${w}`,
      ]);
    });
    test('caps of another category do not apply', () => {
      const other = CATEGORIES.find((c) => c !== category)!;
      const rails: GuardRails = { category_caps: { [other]: { max_per_payment: 0n, daily: 0n, monthly: 0n } }, on_budget_exceeded: 'reject' };
      expect(pick(decide(rails, intent(base), usageIn(other, u('5'), u('5')), NOW))).toEqual(passOutcome);
    });
  });

  test('reasons state the numbers', () => {
    expect(decide({ max_per_payment: u('9.5') }, intent({ amount: u('12.25') }), usage(), NOW).reason).toBe(
      '12.25 USDC is above the maximum of 9.5 USDC per payment.',
    );
    expect(decide({ max_payments_per_day: 3 }, intent(), usage({ payments_today: 3 }), NOW).reason).toContain('3 payments');
    expect(decide({ valid_until: new Date('2024-01-01T00:00:00Z') }, intent(), usage(), NOW).reason).toContain('2024-01-01T00:00:00.000Z');
  });
});

describe('active_hours', () => {
  const nineToFive: ActiveHours = { timezone: 'America/New_York', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' };
  const fridayNight: ActiveHours = { timezone: 'Asia/Kolkata', days: ['fri'], start: '22:00', end: '06:00' };
  const allDayWeekend: ActiveHours = { timezone: 'UTC', days: ['sat', 'sun'], start: '00:00', end: '00:00' };
  const eveningToMidnight: ActiveHours = { timezone: 'UTC', days: ['mon'], start: '18:00', end: '00:00' };
  // [name, hours, now (UTC), inside]
  const cases: [string, ActiveHours, string, boolean][] = [
    ['New York Monday 09:00 EDT is inside (start inclusive)', nineToFive, '2024-06-03T13:00:00Z', true],
    ['New York Monday 08:59 EDT is outside', nineToFive, '2024-06-03T12:59:00Z', false],
    ['New York Monday 16:59 EDT is inside', nineToFive, '2024-06-03T20:59:00Z', true],
    ['New York Monday 17:00 EDT is outside (end exclusive)', nineToFive, '2024-06-03T21:00:00Z', false],
    ['New York Saturday noon is outside (day not listed)', nineToFive, '2024-06-08T16:00:00Z', false],
    ['New York Friday 20:00 EDT is outside although it is Saturday in UTC', nineToFive, '2024-06-08T00:00:00Z', false],
    ['New York Monday 09:00 EST in winter is inside', nineToFive, '2024-01-08T14:00:00Z', true],
    ['Kolkata Friday 22:00 IST starts the overnight range', fridayNight, '2024-06-07T16:30:00Z', true],
    ['Kolkata Friday 21:59 IST is outside', fridayNight, '2024-06-07T16:29:00Z', false],
    ['Kolkata Saturday 05:59 IST is inside (the range that began Friday)', fridayNight, '2024-06-08T00:29:00Z', true],
    ['Kolkata Saturday 06:00 IST is outside (end exclusive)', fridayNight, '2024-06-08T00:30:00Z', false],
    ['Kolkata Friday 05:00 IST is outside (Thursday is not listed)', fridayNight, '2024-06-06T23:30:00Z', false],
    ['Kolkata Saturday 22:30 IST is outside (Saturday is not listed)', fridayNight, '2024-06-08T17:00:00Z', false],
    ['start = end is the whole listed day: Saturday 00:00', allDayWeekend, '2024-06-08T00:00:00Z', true],
    ['start = end is the whole listed day: Sunday 23:59', allDayWeekend, '2024-06-09T23:59:00Z', true],
    ['start = end: Monday 00:00 is outside', allDayWeekend, '2024-06-10T00:00:00Z', false],
    ['end 00:00 runs to midnight: Monday 23:59', eveningToMidnight, '2024-06-03T23:59:00Z', true],
    ['end 00:00 runs to midnight: Tuesday 00:00 is outside', eveningToMidnight, '2024-06-04T00:00:00Z', false],
    ['no days: every minute is outside', { timezone: 'UTC', days: [], start: '00:00', end: '00:00' }, '2024-06-05T12:00:00Z', false],
  ];
  test.each(cases)('%s', (_name, hours, now, inside) => {
    const d = decide({ active_hours: hours }, intent(), usage(), new Date(now));
    expect(pick(d)).toEqual(inside ? ['pre_approved', null] : ['awaiting_approval', 'active_hours']);
  });

  test('isActiveAt treats Monday after an overnight Sunday range as inside', () => {
    const sunday: ActiveHours = { timezone: 'UTC', days: ['sun'], start: '23:00', end: '01:00' };
    expect(isActiveAt(sunday, 0, 30)).toBe(true);
    expect(isActiveAt(sunday, 0, 60)).toBe(false);
    expect(isActiveAt(sunday, 6, 23 * 60)).toBe(true);
    expect(isActiveAt(sunday, 6, 30)).toBe(false);
  });
});

describe('windowStarts', () => {
  // [name, now, timezone, daily, weekly, monthly]
  const cases: [string, string, string | undefined, string, string, string][] = [
    ['UTC by default; a Wednesday', '2024-06-05T12:00:00Z', undefined, '2024-06-05T00:00:00Z', '2024-06-03T00:00:00Z', '2024-06-01T00:00:00Z'],
    ['UTC at midnight a new day starts', '2024-06-05T00:00:00Z', 'UTC', '2024-06-05T00:00:00Z', '2024-06-03T00:00:00Z', '2024-06-01T00:00:00Z'],
    ['UTC one second before midnight is still the old day', '2024-06-04T23:59:59Z', 'UTC', '2024-06-04T00:00:00Z', '2024-06-03T00:00:00Z', '2024-06-01T00:00:00Z'],
    ['UTC Sunday belongs to the week that began Monday', '2024-06-09T23:59:59Z', 'UTC', '2024-06-09T00:00:00Z', '2024-06-03T00:00:00Z', '2024-06-01T00:00:00Z'],
    ['UTC Monday 00:00 starts a new week', '2024-06-10T00:00:00Z', 'UTC', '2024-06-10T00:00:00Z', '2024-06-10T00:00:00Z', '2024-06-01T00:00:00Z'],
    ['UTC the 1st starts a new month', '2024-03-01T00:00:00Z', 'UTC', '2024-03-01T00:00:00Z', '2024-02-26T00:00:00Z', '2024-03-01T00:00:00Z'],
    ['UTC leap day', '2024-02-29T10:00:00Z', 'UTC', '2024-02-29T00:00:00Z', '2024-02-26T00:00:00Z', '2024-02-01T00:00:00Z'],
    ['New York 23:59:59 EDT is still Tuesday', '2024-06-05T03:59:59Z', 'America/New_York', '2024-06-04T04:00:00Z', '2024-06-03T04:00:00Z', '2024-06-01T04:00:00Z'],
    ['New York local midnight EDT starts Wednesday', '2024-06-05T04:00:00Z', 'America/New_York', '2024-06-05T04:00:00Z', '2024-06-03T04:00:00Z', '2024-06-01T04:00:00Z'],
    ['New York on the DST day: week and month began in EST', '2024-03-10T12:00:00Z', 'America/New_York', '2024-03-10T05:00:00Z', '2024-03-04T05:00:00Z', '2024-03-01T05:00:00Z'],
    ['New York after the DST change: day began in EDT', '2024-03-11T12:00:00Z', 'America/New_York', '2024-03-11T04:00:00Z', '2024-03-11T04:00:00Z', '2024-03-01T05:00:00Z'],
    ['New York New Year in UTC is still December 31 locally', '2025-01-01T02:00:00Z', 'America/New_York', '2024-12-31T05:00:00Z', '2024-12-30T05:00:00Z', '2024-12-01T05:00:00Z'],
    ['Kolkata local midnight (18:30 UTC) starts the day', '2024-06-04T18:30:00Z', 'Asia/Kolkata', '2024-06-04T18:30:00Z', '2024-06-02T18:30:00Z', '2024-05-31T18:30:00Z'],
    ['Kolkata one second before local midnight', '2024-06-04T18:29:59Z', 'Asia/Kolkata', '2024-06-03T18:30:00Z', '2024-06-02T18:30:00Z', '2024-05-31T18:30:00Z'],
    ['Kolkata Monday morning begins the week at Sunday 18:30 UTC', '2024-06-03T01:00:00Z', 'Asia/Kolkata', '2024-06-02T18:30:00Z', '2024-06-02T18:30:00Z', '2024-05-31T18:30:00Z'],
    ['Santiago: a DST gap skips midnight, the day starts at 01:00', '2024-09-08T15:00:00Z', 'America/Santiago', '2024-09-08T04:00:00Z', '2024-09-02T04:00:00Z', '2024-09-01T04:00:00Z'],
    ['Auckland (UTC+12) Monday starts on Sunday in UTC', '2024-06-03T00:00:00Z', 'Pacific/Auckland', '2024-06-02T12:00:00Z', '2024-06-02T12:00:00Z', '2024-05-31T12:00:00Z'],
  ];
  test.each(cases)('%s', (_name, now, tz, daily, weekly, monthly) => {
    const w = windowStarts(new Date(now), tz);
    expect([w.daily.toISOString(), w.weekly.toISOString(), w.monthly.toISOString()]).toEqual([
      new Date(daily).toISOString(),
      new Date(weekly).toISOString(),
      new Date(monthly).toISOString(),
    ]);
  });

  test('every window start is at or before now and the week starts on a local Monday', () => {
    for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Chatham', 'America/Santiago']) {
      for (let h = 0; h < 24 * 40; h += 7) {
        const now = new Date(Date.UTC(2024, 8, 1) + h * 3600_000);
        const w = windowStarts(now, tz);
        expect(w.daily.getTime()).toBeLessThanOrEqual(now.getTime());
        expect(w.weekly.getTime()).toBeLessThanOrEqual(w.daily.getTime());
        expect(w.monthly.getTime()).toBeLessThanOrEqual(w.daily.getTime());
        const weekday = new Intl.DateTimeFormat('en-US', { timeZone: tz, weekday: 'short' }).format(w.weekly);
        const monthDay = new Intl.DateTimeFormat('en-US', { timeZone: tz, day: 'numeric' }).format(w.monthly);
        expect([weekday, monthDay]).toEqual(['Mon', '1']);
      }
    }
  });
});

describe('localTime', () => {
  /** The same fields from an independent formatting (sv-SE prints "2026-03-08 03:00:05"). */
  const reference = (at: number, timeZone: string) => {
    const [date, time] = new Date(at).toLocaleString('sv-SE', { timeZone, hourCycle: 'h23' }).split(' ');
    const [year, month, day] = date!.split('-').map(Number) as [number, number, number];
    const [hour, minute] = time!.split(':').map(Number) as [number, number];
    const weekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(new Date(at).toLocaleDateString('en-US', { timeZone, weekday: 'short' }));
    return { year, month, day, weekday, minute: hour * 60 + minute };
  };

  // [zone, an instant near one of its 2026 offset changes (none for Kathmandu)]: whole-hour, half-hour and 45-minute offsets and shifts.
  test.each([
    ['America/New_York', '2026-03-08T07:00:00Z'],
    ['Europe/London', '2026-03-29T01:00:00Z'],
    ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
    ['Pacific/Chatham', '2026-04-04T14:00:00Z'],
    ['America/St_Johns', '2026-11-01T04:30:00Z'],
    ['Asia/Kathmandu', '2026-06-01T18:15:00Z'],
  ])('answers as an independent formatting every 37 s for 6 h around an offset change in %s, reused within a UTC minute', (zone, change) => {
    const from = Date.parse(change) - 3 * 3600_000;
    const offsets = new Set<number>();
    for (let at = from; at < from + 6 * 3600_000; at += 37_000) {
      const want = reference(at, zone);
      expect({ at: new Date(at).toISOString(), ...localTime(at, zone) }).toEqual({ at: new Date(at).toISOString(), ...want });
      offsets.add(Date.UTC(want.year, want.month - 1, want.day) / 60_000 + want.minute - Math.floor(at / 60_000));
    }
    // The window holds the offset change (two offsets), except in Kathmandu, which has none.
    expect(offsets.size).toBe(zone === 'Asia/Kathmandu' ? 1 : 2);
  });
});

describe('hostMatches', () => {
  test.each([
    ['api.example.com', 'api.example.com', true],
    ['api.example.com', 'API.EXAMPLE.COM', true],
    ['api.example.com', 'api.example.com.', true],
    ['api.example.com', 'x.api.example.com', false],
    ['*.example.com', 'a.example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', '.example.com', false],
    ['*.example.com', 'badexample.com', false],
  ] as const)('%s vs %s → %p', (pattern, host, expected) => {
    expect(hostMatches(pattern, host)).toBe(expected);
  });
});

describe('remaining', () => {
  test('no rails: every allowance is unlimited (null)', () => {
    const r = remaining({}, usage({ daily: u('5') }));
    expect([r.daily, r.weekly, r.monthly, r.total, r.payments_today]).toEqual([null, null, null, null, null]);
    for (const c of CATEGORIES) expect(r.by_category[c]).toEqual({ daily: null, monthly: null });
  });

  test('each window shows its limit minus its usage, never below zero', () => {
    const rails: GuardRails = {
      budgets: { daily: u('50'), weekly: u('100'), monthly: u('300'), total: u('1000') },
      max_payments_per_day: 5,
      category_caps: { x402: { daily: u('2'), monthly: u('20') }, withdrawal: { daily: u('100') } },
    };
    const used = usage({ daily: u('12.5'), weekly: u('120'), monthly: u('300'), total: u('0.000001'), payments_today: 7 });
    used.by_category.x402 = { daily: u('1.999999'), monthly: u('3') };
    const r = remaining(rails, used);
    expect([r.daily, r.weekly, r.monthly, r.total, r.payments_today]).toEqual([u('37.5'), 0n, 0n, u('999.999999'), 0]);
    expect(r.by_category.x402).toEqual({ daily: 1n, monthly: u('17') });
    expect(r.by_category.withdrawal).toEqual({ daily: u('100'), monthly: null });
    expect(r.by_category.wallet).toEqual({ daily: null, monthly: null });
  });

  test('a payment of exactly the remaining daily allowance passes and one micro-unit more does not', () => {
    const rails: GuardRails = { budgets: { daily: u('50') }, on_budget_exceeded: 'reject' };
    const used = usage({ daily: u('12.345678') });
    const left = remaining(rails, used).daily!;
    expect(decide(rails, intent({ amount: left }), used, NOW).outcome).toBe('pre_approved');
    expect(decide(rails, intent({ amount: left + 1n }), used, NOW).outcome).toBe('rejected');
  });
});
