import { describe, expect, test } from 'bun:test';
import { insertTx } from '../../src/db/transactions.ts';
import { newId } from '../../src/contract/ids.ts';
import { addPendingPayment, addWallet, botCall, claimFor, ownerCall, ownerWorld, tokenFor, type OwnerWorld } from './fixtures.ts';

async function setup() {
  const w = ownerWorld();
  const mine = await addWallet(w.services, { name: 'Agent Mine' });
  const other = await addWallet(w.services, { name: 'Agent Other' });
  await claimFor(w.services, mine.walletId, 'owner@example.com');
  await claimFor(w.services, other.walletId, 'other@example.com');
  return { w, mine, other, token: await tokenFor(w.services, 'owner@example.com') };
}

/** A completed outgoing payment created `agoMs` before now. */
async function spent(w: OwnerWorld, walletId: string, micro: bigint, agoMs = 0) {
  await w.services.db.transaction(async () =>
    await insertTx(w.services.db, { transaction_id: newId('transaction'), wallet_id: walletId, type: 'payment', direction: 'out', category: 'wallet', status: 'completed', amount: micro, fee: 0n, now: w.clock.ms - agoMs }),
  );
}

describe('my_limits', () => {
  test('an unclaimed wallet gets WALLET_NOT_CLAIMED', async () => {
    const w = ownerWorld();
    const fresh = await addWallet(w.services);
    const res = await botCall(w, fresh.apiKey, 'my_limits');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('WALLET_NOT_CLAIMED');
  });

  test('without rails: nothing restricts, remaining is null everywhere', async () => {
    const { w, mine } = await setup();
    const res = await botCall(w, mine.apiKey, 'my_limits');
    expect(res.body.data).toMatchObject({ rails: {}, pending_change: null, budget: null, remaining_allowance: null, frozen: false, timezone: 'UTC' });
    expect(res.body.data.remaining.daily).toBeNull();
  });

  test('shows the rails in force, what is used in each window and what remains, as decimal numbers', async () => {
    const { w, mine, token } = await setup();
    await ownerCall(w, token, 'set_guard_rails', { wallet_id: mine.walletId, rails: { budgets: { daily: 50, monthly: '200' }, max_payments_per_day: 3, loosen_delay_hours: 1 } });
    await spent(w, mine.walletId, 12_250_000n);
    await spent(w, mine.walletId, 100_000_000n, 2 * 86_400_000); // two days ago: counts for the month only
    const res = await botCall(w, mine.apiKey, 'my_limits');
    const d = res.body.data;
    expect(d.rails).toEqual({ budgets: { daily: 50, monthly: 200 }, max_payments_per_day: 3, loosen_delay_hours: 1 });
    expect(d.used).toMatchObject({ daily: 12.25, monthly: 112.25, payments_today: 1 });
    expect(d.remaining).toMatchObject({ daily: 37.75, monthly: 87.75, weekly: null, total: null, payments_today: 2 });
    expect(d.budget).toEqual({ window: 'daily', amount: 50 });
    expect(d.remaining_allowance).toBe(37.75);
    expect(d.windows.daily_start).toBe('2030-01-15T00:00:00.000Z');
  });

  test('a pending loosening is shown with its time and is not yet in force', async () => {
    const { w, mine, token } = await setup();
    await ownerCall(w, token, 'set_guard_rails', { wallet_id: mine.walletId, rails: { budgets: { daily: 10 }, loosen_delay_hours: 5 } });
    await ownerCall(w, token, 'set_guard_rails', { wallet_id: mine.walletId, rails: { budgets: { daily: 99 }, loosen_delay_hours: 5 } });
    const d = (await botCall(w, mine.apiKey, 'my_limits')).body.data;
    expect(d.rails.budgets).toEqual({ daily: 10 });
    expect(d.pending_change).toEqual({ rails: { budgets: { daily: 99 }, loosen_delay_hours: 5 }, apply_at: new Date(w.clock.ms + 5 * 3_600_000).toISOString() });
  });
});

describe('balance', () => {
  test('budget is the tightest budget window and remaining_allowance what is left of it', async () => {
    const { w, mine, token } = await setup();
    expect((await botCall(w, mine.apiKey, 'balance')).body.data).toMatchObject({ balance: 12.5, budget: null, remaining_allowance: null });
    await ownerCall(w, token, 'set_guard_rails', { wallet_id: mine.walletId, rails: { budgets: { daily: 50, monthly: 60 } } });
    await spent(w, mine.walletId, 55_000_000n, 3 * 86_400_000);
    const res = await botCall(w, mine.apiKey, 'balance');
    expect(res.body.data).toMatchObject({ balance: 12.5, budget: { window: 'monthly', amount: 60 }, remaining_allowance: 5 });
  });
});

describe('pending_approvals and approval_status', () => {
  test('pending_approvals lists this wallet’s approvals with a next step, not another wallet’s', async () => {
    const { w, mine, other } = await setup();
    const p = await addPendingPayment(w.services, mine.walletId);
    const theirs = await addPendingPayment(w.services, other.walletId);
    const res = await botCall(w, mine.apiKey, 'pending_approvals');
    expect(res.body.data.total).toBe(1);
    expect(res.body.data.items[0]).toMatchObject({ approval_id: p.approvalId, transaction_id: p.transactionId, amount: 25, status: 'pending' });
    expect(res.body.data.items[0].next_step).toContain('wait_seconds');
    expect(JSON.stringify(res.body)).not.toContain(theirs.approvalId);
  });

  test('approval_status of another wallet’s approval is NOT_FOUND', async () => {
    const { w, mine, other } = await setup();
    const theirs = await addPendingPayment(w.services, other.walletId);
    const res = await botCall(w, mine.apiKey, 'approval_status', { approval_id: theirs.approvalId });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  test('wait_seconds above 30 is a VALIDATION_ERROR', async () => {
    const { w, mine } = await setup();
    const p = await addPendingPayment(w.services, mine.walletId);
    const res = await botCall(w, mine.apiKey, 'approval_status', { approval_id: p.approvalId, wait_seconds: 31 });
    expect(res.status).toBe(400);
  });

  test('the long poll answers as soon as the owner decides, well before wait_seconds', async () => {
    const { w, mine, token } = await setup();
    const p = await addPendingPayment(w.services, mine.walletId);
    const started = performance.now();
    const poll = botCall(w, mine.apiKey, 'approval_status', { approval_id: p.approvalId, wait_seconds: 20 });
    let answered = false;
    void poll.then(() => (answered = true));
    // A deliberate pause (the subject of the test): the poll must still be holding the request.
    await Bun.sleep(150);
    expect(answered).toBe(false);
    expect((await ownerCall(w, token, 'approve', { approval_id: p.approvalId })).status).toBe(200);
    const res = await poll;
    const elapsed = performance.now() - started;
    expect(res.body.data).toMatchObject({ approval_id: p.approvalId, status: 'approved' });
    expect(res.body.data.next_step).toContain(`confirm_payment {"transaction_id":"${p.transactionId}"}`);
    expect(elapsed).toBeLessThan(2_000);
  });

  test('without a decision the long poll returns pending once wait_seconds have passed', async () => {
    const { w, mine } = await setup();
    const p = await addPendingPayment(w.services, mine.walletId);
    const started = performance.now();
    const res = await botCall(w, mine.apiKey, 'approval_status', { approval_id: p.approvalId, wait_seconds: 1 });
    const elapsed = performance.now() - started;
    expect(res.body.data.status).toBe('pending');
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(1_800);
  });
});
