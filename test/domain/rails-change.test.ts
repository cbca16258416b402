import { describe, expect, test } from 'bun:test';
import { CATEGORIES, decide, emptyUsage, type ActiveHours, type GuardRails } from '../../src/domain/guardrails.ts';
import { classifyChange, effectiveRails, type PendingRails } from '../../src/domain/rails-change.ts';

const A = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const B = 'BobBobBobBobBobBobBobBobBobBobBobBobBobBobB1';
const T1 = new Date('2030-01-01T00:00:00Z');
const T2 = new Date('2030-06-01T00:00:00Z');
const NEVER: ActiveHours = { timezone: 'UTC', days: [], start: '00:00', end: '00:00' };
const hours = (over: Partial<ActiveHours>): ActiveHours => ({ timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00', ...over });

// [name, old, next, rails in force now, whether next is deferred]
type Case = [string, GuardRails, GuardRails, GuardRails, boolean];
const cases: Case[] = [
  ['no change', { max_per_payment: 10n }, { max_per_payment: 10n }, { max_per_payment: 10n }, false],
  // upper limits
  ['lowering a limit applies now', { max_per_payment: 10n }, { max_per_payment: 5n }, { max_per_payment: 5n }, false],
  ['raising a limit waits', { max_per_payment: 10n }, { max_per_payment: 20n }, { max_per_payment: 10n }, true],
  ['adding a limit applies now', {}, { approval_above: 5n }, { approval_above: 5n }, false],
  ['removing a limit waits', { approval_above: 5n }, {}, { approval_above: 5n }, true],
  ['x402_max_per_request raised waits', { x402_max_per_request: 1n }, { x402_max_per_request: 2n }, { x402_max_per_request: 1n }, true],
  ['x402_daily_per_host lowered applies now', { x402_daily_per_host: 5n }, { x402_daily_per_host: 3n }, { x402_daily_per_host: 3n }, false],
  ['x402_daily_per_host removed waits', { x402_daily_per_host: 5n }, {}, { x402_daily_per_host: 5n }, true],
  ['max_payments_per_day lowered applies now', { max_payments_per_day: 5 }, { max_payments_per_day: 3 }, { max_payments_per_day: 3 }, false],
  ['max_payments_per_day raised waits', { max_payments_per_day: 3 }, { max_payments_per_day: 5 }, { max_payments_per_day: 3 }, true],
  ['budgets: each window on its own (daily down now, weekly up later)', { budgets: { daily: 50n, weekly: 200n } }, { budgets: { daily: 40n, weekly: 300n } }, { budgets: { daily: 40n, weekly: 200n } }, true],
  ['budgets: a removed window waits, an added one applies', { budgets: { daily: 50n } }, { budgets: { monthly: 500n } }, { budgets: { daily: 50n, monthly: 500n } }, true],
  ['budgets: all lowered apply now', { budgets: { daily: 50n, total: 900n } }, { budgets: { daily: 1n, total: 2n } }, { budgets: { daily: 1n, total: 2n } }, false],
  [
    'category caps: a lowered cap applies now, a raised one of another category waits',
    { category_caps: { x402: { daily: 2n }, wallet: { max_per_payment: 10n } } },
    { category_caps: { x402: { daily: 1n }, wallet: { max_per_payment: 20n } } },
    { category_caps: { x402: { daily: 1n }, wallet: { max_per_payment: 10n } } },
    true,
  ],
  ['category caps: adding a category applies now', {}, { category_caps: { withdrawal: { monthly: 9n } } }, { category_caps: { withdrawal: { monthly: 9n } } }, false],
  ['category caps: removing a category waits', { category_caps: { merchant: { daily: 9n } } }, {}, { category_caps: { merchant: { daily: 9n } } }, true],
  ['valid_until earlier applies now', { valid_until: T2 }, { valid_until: T1 }, { valid_until: T1 }, false],
  ['valid_until later waits', { valid_until: T1 }, { valid_until: T2 }, { valid_until: T1 }, true],
  ['valid_until removed waits', { valid_until: T1 }, {}, { valid_until: T1 }, true],
  ['valid_until added applies now', {}, { valid_until: T1 }, { valid_until: T1 }, false],
  // flags and modes
  ['freezing applies now', {}, { frozen: true }, { frozen: true }, false],
  ['unfreezing waits', { frozen: true }, { frozen: false }, { frozen: true }, true],
  ['dropping frozen waits', { frozen: true }, {}, { frozen: true }, true],
  ['frozen false to absent is no change', { frozen: false }, {}, {}, false],
  ['approve_new_recipients on applies now', {}, { approve_new_recipients: true }, { approve_new_recipients: true }, false],
  ['approve_new_recipients off waits', { approve_new_recipients: true }, { approve_new_recipients: false }, { approve_new_recipients: true }, true],
  ['on_budget_exceeded to reject applies now', {}, { on_budget_exceeded: 'reject' }, { on_budget_exceeded: 'reject' }, false],
  ['on_budget_exceeded back to require_approval waits', { on_budget_exceeded: 'reject' }, { on_budget_exceeded: 'require_approval' }, { on_budget_exceeded: 'reject' }, true],
  ['on_budget_exceeded explicit default is no change', {}, { on_budget_exceeded: 'require_approval' }, { on_budget_exceeded: 'require_approval' }, false],
  ['a longer loosen delay applies now', { loosen_delay_hours: 24 }, { loosen_delay_hours: 48 }, { loosen_delay_hours: 48 }, false],
  ['a shorter loosen delay waits', { loosen_delay_hours: 48 }, { loosen_delay_hours: 0 }, { loosen_delay_hours: 48 }, true],
  ['removing the loosen delay waits', { loosen_delay_hours: 1 }, {}, { loosen_delay_hours: 1 }, true],
  // recipient lists
  ['introducing an allowlist applies now', {}, { allowed_recipients: ['alice'] }, { allowed_recipients: ['alice'] }, false],
  ['removing an entry from the allowlist applies now', { allowed_recipients: ['alice', 'bob'] }, { allowed_recipients: ['alice'] }, { allowed_recipients: ['alice'] }, false],
  ['adding an entry to the allowlist waits', { allowed_recipients: ['alice'] }, { allowed_recipients: ['alice', 'bob'] }, { allowed_recipients: ['alice'] }, true],
  ['swapping allowlist entries allows only the common ones now', { allowed_recipients: ['alice', 'carol'] }, { allowed_recipients: ['bob', 'carol'] }, { allowed_recipients: ['carol'] }, true],
  ['swapping the only entry allows nobody until the delay ends', { allowed_recipients: ['alice'] }, { allowed_recipients: ['bob'] }, { allowed_recipients: [] }, true],
  ['dropping the allowlist waits', { allowed_recipients: ['alice'] }, {}, { allowed_recipients: ['alice'] }, true],
  ['blocking applies now', { blocked_recipients: ['mallory'] }, { blocked_recipients: ['mallory', 'eve'] }, { blocked_recipients: ['mallory', 'eve'] }, false],
  ['unblocking waits', { blocked_recipients: ['mallory'] }, { blocked_recipients: [] }, { blocked_recipients: ['mallory'] }, true],
  ['swapping blocks blocks both now', { blocked_recipients: ['mallory'] }, { blocked_recipients: ['eve'] }, { blocked_recipients: ['eve', 'mallory'] }, true],
  ['dropping the blocklist waits', { blocked_recipients: ['mallory'] }, {}, { blocked_recipients: ['mallory'] }, true],
  ['withdrawal allowlist narrowed applies now', { withdrawal_allowlist: [A, B] }, { withdrawal_allowlist: [B] }, { withdrawal_allowlist: [B] }, false],
  ['withdrawal allowlist widened waits', { withdrawal_allowlist: [A] }, { withdrawal_allowlist: [A, B] }, { withdrawal_allowlist: [A] }, true],
  // hosts compare by wildcard
  ['narrowing a wildcard to one host applies now', { x402_allowed_hosts: ['*.a.com'] }, { x402_allowed_hosts: ['x.a.com'] }, { x402_allowed_hosts: ['x.a.com'] }, false],
  ['narrowing a wildcard to a deeper wildcard applies now', { x402_allowed_hosts: ['*.a.com'] }, { x402_allowed_hosts: ['*.b.a.com'] }, { x402_allowed_hosts: ['*.b.a.com'] }, false],
  ['widening one host to a wildcard waits', { x402_allowed_hosts: ['x.a.com'] }, { x402_allowed_hosts: ['*.a.com'] }, { x402_allowed_hosts: ['x.a.com'] }, true],
  ['dropping a host already covered by a wildcard is no loosening', { x402_allowed_hosts: ['*.a.com', 'x.a.com'] }, { x402_allowed_hosts: ['*.a.com'] }, { x402_allowed_hosts: ['*.a.com'] }, false],
  ['a wildcard does not cover its apex', { x402_allowed_hosts: ['*.a.com'] }, { x402_allowed_hosts: ['a.com'] }, { x402_allowed_hosts: [] }, true],
  ['a mixed host change keeps the covered part now', { x402_allowed_hosts: ['*.com'] }, { x402_allowed_hosts: ['*.a.com', 'b.org'] }, { x402_allowed_hosts: ['*.a.com'] }, true],
  // active hours
  ['introducing active hours applies now', {}, { active_hours: hours({}) }, { active_hours: hours({}) }, false],
  ['dropping active hours waits', { active_hours: hours({}) }, {}, { active_hours: hours({}) }, true],
  ['shorter hours apply now', { active_hours: hours({}) }, { active_hours: hours({ start: '10:00', end: '16:00' }) }, { active_hours: hours({ start: '10:00', end: '16:00' }) }, false],
  ['fewer days apply now', { active_hours: hours({}) }, { active_hours: hours({ days: ['mon', 'thu'] }) }, { active_hours: hours({ days: ['mon', 'thu'] }) }, false],
  ['longer hours wait', { active_hours: hours({}) }, { active_hours: hours({ start: '08:00', end: '18:00' }) }, { active_hours: hours({}) }, true],
  ['an extra day waits', { active_hours: hours({}) }, { active_hours: hours({ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'] }) }, { active_hours: hours({}) }, true],
  ['a shorter overnight range applies now', { active_hours: hours({ start: '22:00', end: '06:00' }) }, { active_hours: hours({ start: '23:00', end: '05:00' }) }, { active_hours: hours({ start: '23:00', end: '05:00' }) }, false],
  ['moving hours later applies the common hours now', { active_hours: hours({}) }, { active_hours: hours({ start: '12:00', end: '20:00' }) }, { active_hours: hours({ start: '12:00', end: '17:00' }) }, true],
  ['swapping days applies the common days now', { active_hours: hours({ days: ['mon', 'tue'] }) }, { active_hours: hours({ days: ['tue', 'wed'] }) }, { active_hours: hours({ days: ['tue'] }) }, true],
  ['disjoint hours leave no active minute until the change applies', { active_hours: hours({ start: '09:00', end: '12:00' }) }, { active_hours: hours({ start: '13:00', end: '17:00' }) }, { active_hours: NEVER }, true],
  ['a common part no single range expresses leaves no active minute', { active_hours: hours({ start: '22:00', end: '06:00' }) }, { active_hours: hours({ start: '05:00', end: '23:00' }) }, { active_hours: NEVER }, true],
  ['whole days narrowed to office hours apply now', { active_hours: hours({ start: '00:00', end: '00:00' }) }, { active_hours: hours({}) }, { active_hours: hours({}) }, false],
  ['a change of time zone waits, with no active minute until then', { active_hours: hours({}) }, { active_hours: hours({ timezone: 'Asia/Kolkata', start: '10:00', end: '16:00' }) }, { active_hours: NEVER }, true],
  ['first active hours outside UTC move the budget windows: they wait', {}, { active_hours: hours({ timezone: 'America/New_York' }) }, { active_hours: NEVER }, true],
  ['dropping active hours of another zone waits', { active_hours: hours({ timezone: 'Asia/Kolkata' }) }, {}, { active_hours: hours({ timezone: 'Asia/Kolkata' }) }, true],
];

describe('classifyChange', () => {
  test.each(cases)('%s', (_name, old, next, now, deferred) => {
    const { tightening, loosening } = classifyChange(old, next);
    expect(tightening).toStrictEqual(now);
    expect(loosening).toBe(deferred ? next : null);
  });

  test('the rails in force now are never looser than the old rails nor than the new ones', () => {
    // A payment matrix over every case: whatever the old or the new rails reject, the rails in force now reject.
    const usage = emptyUsage();
    const rank = { pre_approved: 0, awaiting_approval: 1, rejected: 2 } as const;
    const moments = ['2024-06-03T10:00:00Z', '2024-06-03T20:00:00Z', '2024-06-08T23:30:00Z'].map((s) => new Date(s));
    for (const [, old, next] of cases) {
      const { tightening } = classifyChange(old, next);
      for (const category of CATEGORIES)
        for (const amount of [1n, 3n, 7n, 15n])
          for (const [username, address] of [['alice', A], ['bob', B], ['carol', A], ['eve', B], ['mallory', A]] as const)
            for (const host of ['x.a.com', 'y.b.a.com', 'a.com', 'b.org'])
              for (const at of moments) {
                const intent = { category, amount, recipient: { username, address }, host };
                const strictest = Math.max(rank[decide(old, intent, usage, at).outcome], rank[decide(next, intent, usage, at).outcome]);
                expect(rank[decide(tightening, intent, usage, at).outcome]).toBeGreaterThanOrEqual(strictest);
              }
    }
  });

  test('a mixed change splits: the tightening applies now and the whole new document waits', () => {
    const old: GuardRails = { max_per_payment: 10n, budgets: { daily: 50n }, blocked_recipients: ['eve'], loosen_delay_hours: 24 };
    const next: GuardRails = { max_per_payment: 100n, budgets: { daily: 20n }, blocked_recipients: ['eve', 'mallory'], frozen: false, loosen_delay_hours: 24 };
    expect(classifyChange(old, next)).toStrictEqual({
      tightening: { max_per_payment: 10n, budgets: { daily: 20n }, blocked_recipients: ['eve', 'mallory'], frozen: false, loosen_delay_hours: 24 },
      loosening: next,
    });
  });
});

describe('effectiveRails', () => {
  const current: GuardRails = { max_per_payment: 10n };
  const pending: PendingRails = { rails: { max_per_payment: 20n }, apply_at: new Date('2024-06-02T12:00:00Z') };
  test.each([
    ['no pending change: the current rails', null, '2024-06-02T12:00:00Z', current],
    ['before apply_at: the current rails', pending, '2024-06-02T11:59:59.999Z', current],
    ['exactly at apply_at: the pending rails', pending, '2024-06-02T12:00:00Z', pending.rails],
    ['after apply_at: the pending rails', pending, '2024-07-01T00:00:00Z', pending.rails],
  ] as const)('%s', (_name, p, now, expected) => {
    expect(effectiveRails(current, p, new Date(now))).toBe(expected);
  });

  test('a loosening waits for apply_at while a tightening in the same change applies at once', () => {
    const usage = emptyUsage();
    const setAt = new Date('2024-06-01T12:00:00Z');
    const old: GuardRails = { max_per_payment: 10_000_000n, loosen_delay_hours: 24 };
    const next: GuardRails = { max_per_payment: 20_000_000n, blocked_recipients: ['mallory'], loosen_delay_hours: 24 };
    const { tightening, loosening } = classifyChange(old, next);
    const p: PendingRails | null = loosening && { rails: loosening, apply_at: new Date(setAt.getTime() + (old.loosen_delay_hours ?? 0) * 3600_000) };
    const pay = (username: string, amount: bigint, at: string) =>
      decide(effectiveRails(tightening, p, new Date(at)), { category: 'wallet', amount, recipient: { username, address: A } }, usage, new Date(at)).rule;
    expect(pay('mallory', 1n, '2024-06-01T12:00:00Z')).toBe('blocked_recipients');
    expect(pay('alice', 15_000_000n, '2024-06-02T11:59:59Z')).toBe('max_per_payment');
    expect(pay('alice', 15_000_000n, '2024-06-02T12:00:00Z')).toBeNull();
    expect(pay('mallory', 1n, '2024-06-02T12:00:00Z')).toBe('blocked_recipients');
  });
});
