/**
 * The owner sees the money at a glance (issue 43, the owner's pages): budget bars and a 30-day
 * chart on the wallet page, computed by the guard rails' own windows; approvals that say why and
 * write amount + fee = total one way; the agents' open fund requests (with Decline and a reason the
 * agent reads) and paylinks on dashboard home. Real app over a real in-memory ledger, through app.handle like a browser
 * without JavaScript.
 */
import { describe, expect, test } from 'bun:test';
import { walletAllowance } from '../../src/actions/approvals.ts';
import { newId } from '../../src/contract/ids.ts';
import { getFundRequest, insertFundRequest } from '../../src/db/fund-requests.ts';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { insertPaylink } from '../../src/db/paylinks.ts';
import { insertTx } from '../../src/db/transactions.ts';
import { insertWithdrawal } from '../../src/db/withdrawals.ts';
import { decide } from '../../src/domain/guardrails.ts';
import { amountFeeTotal, dayStarts, percentOf, spendByDay } from '../../src/domain/spending.ts';
import { addPendingPayment, START, type OwnerWorld, ownerWorld } from '../actions/fixtures.ts';
import { Browser, claimedInBrowser } from './browser.ts';

/** An outgoing transaction at `at` (ms), as the payment code writes one. */
async function spend(w: OwnerWorld, walletId: string, o: { at: number; amount: bigint; fee?: bigint; type?: 'payment' | 'x402' | 'withdrawal'; category?: 'wallet' | 'x402' | 'withdrawal' | 'merchant'; status?: 'completed' | 'failed' | 'pending'; note?: string }) {
  const id = newId('transaction');
  await w.services.db.transaction(async () => {
    await insertTx(w.services.db, {
      transaction_id: id,
      wallet_id: walletId,
      type: o.type ?? 'payment',
      direction: 'out',
      category: o.category ?? 'wallet',
      status: o.status ?? 'completed',
      amount: o.amount,
      fee: o.fee ?? 0n,
      counterparty: 'shop-1',
      note: o.note,
      now: o.at,
    });
    if (o.type === 'withdrawal') await insertWithdrawal(w.services.db, { withdrawal_id: newId('withdrawal'), transaction_id: id, wallet_id: walletId, to_address: 'Cold1111', reason: 'to cold storage', now: o.at });
  });
  return id;
}

const setRails = async (b: Browser, walletId: string, doc: unknown) => {
  const page = await b.request(`/dashboard/wallets/${walletId}`);
  const res = await b.request(`/dashboard/wallets/${walletId}/rails-json`, { csrf: Browser.csrf(page.text), rails_json: JSON.stringify(doc) });
  expect(res.status).toBe(303);
};

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('wallet page: spending at a glance', () => {
  test('budget bars show amount, percent and the rule, from the same windows and usage the guard rails decide on (owner time zone)', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'bars@example.com');
    // New York: START (2030-01-15T10:00Z) is 05:00 local; 03:00Z is still the 14th there.
    await setRails(b, wallet.walletId, {
      budgets: { daily: '40', weekly: '100', monthly: '500' },
      active_hours: { timezone: 'America/New_York', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '00:00' },
    });
    await spend(w, wallet.walletId, { at: START - 7 * HOUR, amount: 9_000_000n }); // 03:00Z: the 14th in New York, not today
    await spend(w, wallet.walletId, { at: START - HOUR, amount: 10_000_000n, fee: 50_000n }); // 04:00 local today
    await spend(w, wallet.walletId, { at: START - HOUR / 2, amount: 5_000_000n, type: 'x402', category: 'x402' });
    await spend(w, wallet.walletId, { at: START - HOUR / 4, amount: 70_000_000n, type: 'withdrawal', category: 'withdrawal', status: 'pending' }); // not a budget
    await spend(w, wallet.walletId, { at: START - HOUR / 8, amount: 99_000_000n, status: 'failed' }); // released

    const a = await walletAllowance(w.services, wallet.walletId);
    expect(a.usage.daily).toBe(15_050_000n);
    const res = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(res.status).toBe(200);
    const spending = res.text.slice(res.text.indexOf('id="spending"'), res.text.indexOf('id="history"'));
    expect(spending).toContain(`<strong>Today</strong>: 15.05 of 40 USDC (37%)</span> <span class="muted mono">budgets.daily</span>`);
    expect(spending).toContain(`<strong>This week</strong>: 24.05 of 100 USDC (24%)`);
    expect(spending).toContain(`<strong>This month</strong>: 24.05 of 500 USDC (4%)`);
    expect(spending).toContain('midnight America/New_York');
    // The bar is what decide() reads: 24.95 more fits today's 40, 24.96 goes over.
    expect(decide(a.rails, { category: 'wallet', amount: 24_950_000n, recipient: { address: 'x' } }, a.usage, a.now).rule).toBeNull();
    expect(decide(a.rails, { category: 'wallet', amount: 24_960_000n, recipient: { address: 'x' } }, a.usage, a.now).rule).toBe('budgets.daily');
    // Above the history; the bar itself is hidden from screen readers (the text says it), and draws with CSS off.
    expect(res.text.indexOf('id="spending"')).toBeLessThan(res.text.indexOf('id="history"'));
    expect(spending).toMatch(/<svg class="bar" viewBox="0 0 100 6" width="100%" height="12" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect width="100" height="6" fill="#e6e9ed"\/><rect width="37" height="6" fill="#0b57d0"\/><\/svg>/);
  });

  test('the daily payment count and each category cap the rails set get a bar too, named by their rule', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'caps@example.com');
    await setRails(b, wallet.walletId, { max_payments_per_day: 4, category_caps: { x402: { daily: '2', monthly: '20' } } });
    await spend(w, wallet.walletId, { at: START - HOUR, amount: 1_500_000n, type: 'x402', category: 'x402' });
    await spend(w, wallet.walletId, { at: START - 20 * HOUR, amount: 3_000_000n, type: 'x402', category: 'x402' }); // yesterday: this month only
    await spend(w, wallet.walletId, { at: START - HOUR / 2, amount: 9_000_000n });
    const res = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(res.text).toContain('<strong>Payments today</strong>: 2 of 4 payments (50%)</span> <span class="muted mono">max_payments_per_day</span>');
    expect(res.text).toContain('<strong>Today, x402</strong>: 1.5 of 2 USDC (75%)</span> <span class="muted mono">category_caps.x402.daily</span>');
    expect(res.text).toContain('<strong>This month, x402</strong>: 4.5 of 20 USDC (22%)</span> <span class="muted mono">category_caps.x402.monthly</span>');
    const a = await walletAllowance(w.services, wallet.walletId);
    expect(decide(a.rails, { category: 'x402', amount: 500_000n, recipient: { address: 'x' }, host: 'h' }, a.usage, a.now).rule).toBeNull();
    expect(decide(a.rails, { category: 'x402', amount: 500_001n, recipient: { address: 'x' }, host: 'h' }, a.usage, a.now).rule).toBe('category_caps.x402.daily');
  });

  test('without budgets the page still shows what was spent today, this week and this month, and says no budget is set', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'nobudget@example.com');
    await spend(w, wallet.walletId, { at: START - HOUR, amount: 2_500_000n });
    const res = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(res.text).toContain('<strong>Today</strong>: 2.5 USDC spent</span> <span class="muted">— no daily budget set</span>');
    expect(res.text).toContain('— no monthly budget set');
    expect(res.text).not.toContain('<strong>Lifetime</strong>');
  });

  test('the 30-day chart is server-rendered SVG with a title and description, payments and x402 apart per day, and the numbers as a table', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'chart@example.com');
    await spend(w, wallet.walletId, { at: START - HOUR, amount: 20_000_000n }); // today, payment
    await spend(w, wallet.walletId, { at: START - 2 * HOUR, amount: 4_000_000n, type: 'x402', category: 'x402' }); // today, x402
    await spend(w, wallet.walletId, { at: START - 3 * DAY, amount: 10_000_000n, category: 'merchant' });
    await spend(w, wallet.walletId, { at: START - 40 * DAY, amount: 77_000_000n }); // before the 30 days
    await spend(w, wallet.walletId, { at: START - 2 * DAY, amount: 50_000_000n, type: 'withdrawal', category: 'withdrawal', status: 'completed' }); // not spending
    const res = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    const chart = res.text.slice(res.text.indexOf('<figure class="chart">'), res.text.indexOf('</details>', res.text.indexOf('<figure class="chart">')));
    expect(chart).toContain('role="img" aria-labelledby="chart-title chart-desc"');
    expect(chart).toContain('<p class="chart-top" aria-hidden="true">Top line: 24 USDC</p>');
    expect(chart).toContain('<p class="chart-axis" aria-hidden="true"><span>2029-12-17</span> <span>… 2030-01-15</span></p>');
    expect(chart).toContain('<title id="chart-title">Spending per day, last 30 days</title>');
    expect(chart).toContain('<desc id="chart-desc">30 days from 2029-12-17 to 2030-01-15 (UTC): payments 30 USDC, x402 4 USDC; the busiest day 2030-01-15 with 24 USDC.</desc>');
    // Today's column: payments 20 of 24 → 83 units, x402 stacked above to the full 100 (integer scaling).
    expect(chart).toContain('<rect x="583" y="31" width="14" height="83" fill="#0b57d0"/><rect x="583" y="14" width="14" height="17" fill="#b35900"/>');
    // Three days back: 10 of 24 → 41 units, payments only.
    expect(chart).toContain('<rect x="523" y="73" width="14" height="41" fill="#0b57d0"/>');
    expect(chart).toContain('<tr><th scope="row">2030-01-15</th><td class="num">20</td><td class="num">4</td></tr>');
    expect(chart).toContain('<tr><th scope="row">2030-01-12</th><td class="num">10</td><td class="num">0</td></tr>');
    expect(chart).toContain('<tr><th scope="row">2030-01-13</th><td class="num">0</td><td class="num">0</td></tr>');
    expect(chart).not.toContain('77');
    expect((chart.match(/<tr><th scope="row">/g) ?? []).length).toBe(30);
  });

  test('a new wallet draws an empty chart that says nothing was spent', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'empty@example.com');
    const res = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(res.text).toContain('payments 0 USDC, x402 0 USDC; nothing spent.</desc>');
    expect(res.text).not.toMatch(/<rect x="\d+" y="\d+" width="14"/);
  });
});

describe('spending helpers (integers only)', () => {
  test('amount + fee = total, with the setup fee as its own term', () => {
    expect(amountFeeTotal({ amount: 25_000_000n, fee: 125_000n, setup_fee: 0n })).toBe('25 + 0.125 fee = 25.125 USDC');
    expect(amountFeeTotal({ amount: 1n, fee: 0n, setup_fee: 2_039_280n })).toBe('0.000001 + 0 fee + 2.03928 account setup = 2.039281 USDC');
  });

  test('percent is floored in integers, and a limit of 0 with spending is full', () => {
    expect(percentOf(999_999n, 1_000_000n)).toBe(99);
    expect(percentOf(3_000_000n, 2_000_000n)).toBe(150);
    expect(percentOf(1n, 0n)).toBe(100);
    expect(percentOf(0n, 0n)).toBe(0);
  });

  test('days follow the daily budget window across a DST change; points land in their local day', () => {
    // 2030-03-10 is the US spring-forward day: 23 hours long in New York.
    const now = new Date('2030-03-11T12:00:00Z');
    const starts = dayStarts(now, 'America/New_York', 3);
    expect(starts.map((d) => d.toISOString())).toEqual(['2030-03-09T05:00:00.000Z', '2030-03-10T05:00:00.000Z', '2030-03-11T04:00:00.000Z']);
    const days = spendByDay(starts, [
      { at: Date.parse('2030-03-11T03:59:59Z'), category: 'wallet', cost: 1n },
      { at: Date.parse('2030-03-11T04:00:00Z'), category: 'x402', cost: 2n },
      { at: Date.parse('2030-03-08T12:00:00Z'), category: 'wallet', cost: 99n },
      { at: Date.parse('2030-03-10T12:00:00Z'), category: 'withdrawal', cost: 50n },
    ], 'America/New_York');
    expect(days.map((d) => [d.date, d.payments, d.x402])).toEqual([
      ['2030-03-09', 0n, 0n],
      ['2030-03-10', 1n, 0n],
      ['2030-03-11', 0n, 2n],
    ]);
  });
});

describe('approvals say why, with amount + fee = total everywhere', () => {
  test("the dashboard row, the wallet page row and the approval page carry the agent's note and the same amount + fee = total", async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'why@example.com');
    const { transactionId } = await addPendingPayment(w.services, wallet.walletId, { amount: 25_000_000n, recipient: 'cloud-9' });
    await w.services.db.run('UPDATE transactions SET note = ? WHERE transaction_id = ?', 'GPU hours for the <nightly> run', transactionId);
    const line = '25 + 0.125 fee = 25.125 USDC';
    const home = await b.request('/dashboard');
    expect(home.text).toContain(`<td data-label="Amount" class="num amount">${line}</td>`);
    expect(home.text).toContain(`<p class="said"><strong>The agent's reason:</strong> GPU hours for the &lt;nightly&gt; run</p><p class="muted">Why it waits: 25 USDC is above 20 USDC`);
    expect(home.text).toContain('aria-label="Approve payment of 25.125 USDC to cloud-9"');
    const walletPage = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(walletPage.text).toContain(`<td data-label="Amount" class="num amount">${line}</td>`);
    expect(walletPage.text).toContain('GPU hours for the &lt;nightly&gt; run');

    const { queueApprovalMail } = await import('../../src/mail/approval-mail.ts');
    const { getApproval } = await import('../../src/db/approvals.ts');
    const approvalId = (await w.services.db.get<{ approval_id: string }>('SELECT approval_id FROM transactions WHERE transaction_id = ?', transactionId))!.approval_id;
    await w.services.db.transaction(async () => await queueApprovalMail(w.services, (await getApproval(w.services.db, approvalId))!));
    const mail = (await listMail(w.services.db, 10)).find((m) => m.kind === 'approval')!;
    const approve = new URL((JSON.parse(mail.links) as MailLink[]).find((l) => l.label === 'approve')!.url).pathname;
    const page = await new Browser(w).request(approve);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<dt>Amount</dt><dd><strong>${line}</strong></dd>`);
    expect(page.text).toContain(`<dt>The agent's reason</dt><dd>GPU hours for the &lt;nightly&gt; run</dd>`);
    expect(page.text).toContain('>Approve 25.125 USDC</button>');
  });

  test("an approval whose agent gave no note says so instead of leaving the reader guessing", async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'nonote@example.com');
    await addPendingPayment(w.services, wallet.walletId, { amount: 3_000_000n });
    const home = await b.request('/dashboard');
    expect(home.text).toContain(`<strong>The agent's reason:</strong> <span class="muted">none given</span></p>`);
  });
});

describe('dashboard home: the agents\' fund requests and paylinks', () => {
  async function withAsks(w: OwnerWorld, walletId: string) {
    const fundRequestId = newId('fundRequest');
    const now = w.services.now().getTime();
    await w.services.db.transaction(async () => {
      await insertFundRequest(w.services.db, { fund_request_id: fundRequestId, wallet_id: walletId, amount: 50_000_000n, reason: 'Out of credits for the crawl', after_signature: null, after_slot: null, armed: true, now });
      await insertPaylink(w.services.db, { request_id: newId('paymentRequest'), short_code: 'AbCd2345', payee: { kind: 'wallet', id: walletId }, description: 'Report for ACME', amount: 12_000_000n, items: null, reference: null, reference_key: 'Ref1111111111111111111111111111111111111111', reveal_owner: false, expires_at: now + DAY, now });
    });
    return fundRequestId;
  }

  test('open fund requests (amount, reason, fund page, Decline) and open paylinks (checkout link) are listed', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'asks@example.com', 'Crawler');
    const id = await withAsks(w, wallet.walletId);
    const home = await b.request('/dashboard');
    const asks = home.text.slice(home.text.indexOf('id="fund-requests"'));
    expect(asks).toContain(`<tr id="${id}">`);
    expect(asks).toContain('<td data-label="Amount" class="num">50 USDC</td>');
    expect(asks).toContain('Out of credits for the crawl');
    expect(asks).toContain(`<a class="button" href="/fund/${id}">Fund</a>`);
    expect(asks).toContain(`action="/dashboard/fund-requests/${id}/decline"`);
    expect(asks).toContain('<td data-label="For">Report for ACME</td>');
    expect(asks).toContain('<td data-label="Amount" class="num">12 USDC</td>');
    expect(asks).toContain('<a href="/pay/AbCd2345">/pay/AbCd2345</a>');
  });

  test('Decline resolves the request through the owner action (CSRF checked): the agent gets the event and the list no longer shows it', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'decline@example.com');
    const id = await withAsks(w, wallet.walletId);
    const home = await b.request('/dashboard');
    expect((await b.request(`/dashboard/fund-requests/${id}/decline`, { csrf: 'A'.repeat(43) })).status).toBe(403);
    expect((await getFundRequest(w.services.db, id))!.status).toBe('open');
    const res = await b.request(`/dashboard/fund-requests/${id}/decline`, { csrf: Browser.csrf(home.text) });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard?done=fund_declined#fund-requests');
    const row = (await getFundRequest(w.services.db, id))!;
    expect(row.status).toBe('declined');
    expect(row.resolved_by).toContain('via dashboard');
    expect(await w.services.db.get('SELECT 1 AS x FROM events WHERE wallet_id = ? AND type = ?', wallet.walletId, 'fund_request.declined')).not.toBeNull();
    const after = await b.request('/dashboard?done=fund_declined');
    expect(after.text).toContain('Fund request declined. The agent is told.');
    expect(after.text).not.toContain(`<tr id="${id}">`);
    expect(after.text).toContain('No agent asks for money.');
  });

  test('Decline takes an optional reason beside the button: the agent reads it in its event, the audit log keeps it and the wallet page says it; too long a reason is refused and nothing changes', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'reasons@example.com', 'Crawler');
    const id = await withAsks(w, wallet.walletId);
    const home = await b.request('/dashboard');
    const row = home.text.slice(home.text.indexOf(`<tr id="${id}">`));
    expect(row).toContain(`<details class="decline"><summary>Decline…</summary><form method="post" action="/dashboard/fund-requests/${id}/decline" class="field">`);
    expect(row).toContain(`<label for="reason-${id}">Reason for declining <span class="muted">(optional; the agent reads it)</span></label><input type="text" id="reason-${id}" name="reason" maxlength="200"`);
    // Not on simnet with a faucet here: no faucet button.
    expect(row.slice(0, row.indexOf('</tr>'))).not.toContain('simnet faucet');

    const tooLong = await b.request(`/dashboard/fund-requests/${id}/decline`, { csrf: Browser.csrf(home.text), reason: 'x'.repeat(201) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('/reason: must be at most 200 characters');
    expect((await getFundRequest(w.services.db, id))!.status).toBe('open');

    const res = await b.request(`/dashboard/fund-requests/${id}/decline`, { csrf: Browser.csrf(home.text), reason: '  Use the crawl budget you have  ' });
    expect(res.location).toBe('/dashboard?done=fund_declined#fund-requests');
    expect((await getFundRequest(w.services.db, id))!.status).toBe('declined');
    const event = await w.services.db.get<{ data: string }>('SELECT data FROM events WHERE wallet_id = ? AND type = ?', wallet.walletId, 'fund_request.declined');
    expect(JSON.parse(event!.data)).toEqual({ fund_request_id: id, amount: 50, reason: 'Use the crawl budget you have', by: 'owner' });
    const audit = await w.services.db.get<{ actor: string; data: string }>('SELECT actor, data FROM audit_log WHERE wallet_id = ? AND kind = ?', wallet.walletId, 'fund_request.declined');
    expect(audit!.actor).toMatch(/ via dashboard$/);
    expect(JSON.parse(audit!.data)).toMatchObject({ reason: 'Use the crawl budget you have', requested_for: 'Out of credits for the crawl' });
    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(page.text).toContain('The owner (reasons@example.com) declined the agent&#39;s request for 50 USDC (Out of credits for the crawl) from the dashboard: Use the crawl budget you have</li>');
  });

  test('Decline with the reason field left empty declines without a reason (none in the event)', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'noreason@example.com');
    const id = await withAsks(w, wallet.walletId);
    const home = await b.request('/dashboard');
    expect((await b.request(`/dashboard/fund-requests/${id}/decline`, { csrf: Browser.csrf(home.text), reason: '   ' })).status).toBe(303);
    const event = await w.services.db.get<{ data: string }>('SELECT data FROM events WHERE wallet_id = ? AND type = ?', wallet.walletId, 'fund_request.declined');
    expect(JSON.parse(event!.data)).toEqual({ fund_request_id: id, amount: 50, by: 'owner' });
    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(page.text).toContain('The owner (noreason@example.com) declined the agent&#39;s request for 50 USDC (Out of credits for the crawl) from the dashboard</li>');
  });

  test("another owner's fund request cannot be declined from the dashboard (404, unchanged)", async () => {
    const w = ownerWorld();
    const { wallet } = await claimedInBrowser(w, 'a-owner@example.com');
    const id = await withAsks(w, wallet.walletId);
    const { b: other } = await claimedInBrowser(w, 'b-owner@example.com', 'Other');
    const home = await other.request('/dashboard');
    expect(home.text).not.toContain(id);
    const res = await other.request(`/dashboard/fund-requests/${id}/decline`, { csrf: Browser.csrf(home.text) });
    expect(res.status).toBe(404);
    expect((await getFundRequest(w.services.db, id))!.status).toBe('open');
  });
});
